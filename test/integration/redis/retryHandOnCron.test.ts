import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createdMessages, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendEchoAgent,
  type ClusterNode,
  clusterConfig,
  startNode,
  withPlatform,
} from "../../helpers/redisCluster.js";
import { agentRuns, deliveriesRetrying } from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md, "Retries", with state.backend: redis: the run of a cron job a `cron_job` route
 * fired, handed on while its delivery waits to retry, is delivered by the next instance under the delivery
 * id it was first sent under, so a part the platform posted before its answer was lost is not posted again.
 * The platform is a Discord fake on loopback (de-duplicating by `nonce`, which is made from the route and
 * delivery id) that posts the first message and answers it 502.
 */
let discord: FakeApi;
let redis: TestRedis;
let home: TempHome;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  [discord, redis] = await Promise.all([startFakeDiscord("D", { loseAnswers: 1 }), startTestRedis()]);
  home = tempHome();
});
afterAll(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([discord.close(), redis.cleanup()]);
  home.cleanup();
});

describe("state.backend: redis — a cron_job route's fire handed on while its delivery waits to retry", () => {
  it("is sent by the next instance under the same delivery id, so the platform posts it once", {
    timeout: 30_000,
  }, async () => {
    const log = join(home.dir, `${randomUUID()}.log`);
    const base = clusterConfig(
      redis.url,
      `c${randomUUID()}`,
      { fire: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" } },
      appendEchoAgent(log),
    );
    const cfg = withPlatform(base, "discord", { enabled: true, token: "D", base_url: discord.url });
    const files = {
      "cron/jobs.json": oneJobStore({
        name: "nightly",
        prompt: "nightly digest",
        next_run: "2099-01-01T00:00:00.000Z",
        deliver: "discord",
        deliver_extra: { chat_id: "777" },
      }),
    };
    // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
    const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200, files });
    nodes.push(a);
    const answer = await postJson(a.url("/webhooks/fire"), JSON.stringify({ n: "f-1" }), {
      "X-Request-Id": "f-1",
    });
    expect(answer.status).toBe(202);
    await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    await a.stop();

    // Its 1 s backoff is over by the time this instance takes the job: it is sent again at once.
    const b = await startNode(cfg, { files });
    nodes.push(b);
    const posts = () => discord.requests.filter((r) => r.method === "POST");
    await vi.waitFor(() => expect(posts()).toHaveLength(2), { timeout: 10_000, interval: 20 });
    const nonces = posts().map((r) => (r.json as { nonce?: unknown }).nonce);
    expect(nonces[1]).toBe(nonces[0]);
    expect(createdMessages(discord).map((m) => m.content)).toEqual([
      expect.stringMatching(/^nightly digest/),
    ]);
    // The agent ran once, on the first instance: its delivery id is the one both instances sent under.
    expect(agentRuns(log)).toHaveLength(1);
    expect(agentRuns(log)[0]).toMatch(/^cron-j1-/);
  });
});

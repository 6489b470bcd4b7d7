import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { withFileLock } from "../../../src/io/stores/fileLock.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { sentTexts } from "../../fakes/telegram.js";
import { fakeClock } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import type { ClusterNode } from "../../helpers/redisCluster.js";
import { startNode, withPlatform } from "../../helpers/redisCluster.js";
import {
  answerSends,
  type HandOnWorld,
  handOnRoute,
  linesSaying,
  startHandOnWorld,
  stopHandOnWorld,
} from "../../helpers/telegramHandOn.js";

/**
 * docs/agent.md ("A run that fails") and docs/durability.md, with state.backend: redis: a failed model run's
 * notice that its target took as the gateway's stop came ends its run, failed, as it does with the local
 * backend: the job is finished in Redis, not handed on, so no instance delivers the notice again. The window
 * is reached with a notice that waited to retry (its run out of its worker's slot), then went out and is
 * being mirrored into the chat's session while another writer holds the session index: the stop's drain
 * ends meanwhile, and the writer lets go once the stop's signal is set. Real redis-server, Chat Completions
 * fake answering 401, Telegram fake.
 */
const CHAT = "-1007";
let world: HandOnWorld;
let model: FakeModel;
const nodes: ClusterNode[] = [];
beforeAll(async () => {
  world = await startHandOnWorld();
  model = await startFakeOpenAI();
});
afterAll(async () => {
  await stopHandOnWorld(world, nodes);
  await model.close();
});

describe("state.backend: redis — a failed run's notice delivered as the stop came", {
  timeout: 60_000,
}, () => {
  it("finishes its job: recorded failed, and the next instance sends the notice no second time", async () => {
    const refusal = { status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) };
    model.script(refusal, refusal);
    const {
      cfg: handOn,
      id,
      queue,
      connection,
    } = handOnRoute(world, {
      route: "tgm",
      prompt: "event {n}",
      chat: CHAT,
      deliveryId: "n-1",
    });
    const routes = (handOn.platforms as { webhook: { routes: { tgm: Record<string, unknown> } } }).webhook
      .routes;
    routes.tgm = { ...routes.tgm, mirror_to_session: true };
    const cfg = withPlatform(
      {
        ...handOn,
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
      },
      "telegram",
      (handOn.platforms as { telegram: Record<string, unknown> }).telegram,
    );
    let unavailable = true;
    answerSends(world.tg, () =>
      unavailable
        ? { status: 503, json: { ok: false, error_code: 503, description: "Service Unavailable" } }
        : { json: { ok: true, result: { message_id: 1 } } },
    );
    const clock = fakeClock(Date.now());
    // A short lock: a job this instance's closing worker took again as it stopped is taken over soon.
    const stall = { lockDurationMs: 3000, stalledIntervalMs: 500 };
    const a = await startNode(cfg, { sleeps: clock, drainTimeoutMs: 200, stall });
    nodes.push(a);
    let release = () => {};
    try {
      await SessionStore.forProfile(a.home.dir, undefined).openChat("telegram", CHAT);
      // Another writer (a chat front end) holds the session index until the stop's signal is set.
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const taken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const writer = withFileLock(join(a.home.dir, "sessions", "index.json"), () => {
        locked();
        return held;
      });
      await taken;

      const answer = await postJson(a.url("/webhooks/tgm"), JSON.stringify({ n: 1 }), {
        "X-Request-Id": "n-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(() => expect(linesSaying(a, "retry 1/")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(clock.pendingTimers()).toBeGreaterThan(0), {
        timeout: 10_000,
        interval: 20,
      });
      unavailable = false;
      clock.advance(60_000);
      await vi.waitFor(() => expect(linesSaying(a, "telegram: delivered for route tgm")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      const notice = sentTexts(world.tg).at(-1);
      expect(notice).toContain("Agent run failed");

      const stopping = a.gateway.stop();
      await vi.waitFor(() => expect(linesSaying(a, "stopped when the drain ended")).toHaveLength(1), {
        timeout: 10_000,
        interval: 5,
      });
      release();
      await writer;
      await stopping;
      expect(linesSaying(a, "[webhook] tgm: agent run failed")).toHaveLength(1);
      // Finished in Redis (ended outside its slot), not handed on with its notice.
      const job = await queue.getJob(id);
      expect((job?.data as { done?: boolean } | undefined)?.done).toBe(true);

      const b = await startNode(cfg, { sleeps: fakeClock(Date.now()), stall });
      nodes.push(b);
      if ((await queue.getJobState(id)) === "delayed") await job?.promote();
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 20_000,
        interval: 20,
      });
      expect(sentTexts(world.tg).filter((text) => text === notice)).toHaveLength(2);
      expect(linesSaying(b, "delivered for route tgm")).toHaveLength(0);
      expect(model.requests).toHaveLength(1);
    } finally {
      release();
      await queue.close();
      connection.disconnect();
    }
  });
});

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * With state.backend: redis a run waits in the shared queue as JSON: which of its `deliver_extra` templates
 * the event left unfilled goes with it, so a chat id the event filled with text in braces is delivered to
 * once the run is taken from Redis, and a placeholder it had no field for is still refused.
 */
const OPEN = "INSECURE_NO_AUTH";
let telegram: FakeApi;
let redis: TestRedis;
let node: ClusterNode;

beforeAll(async () => {
  [telegram, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  const config = clusterConfig(
    redis.url,
    `braced-${randomUUID()}`,
    {
      ci: {
        secret: OPEN,
        prompt: "Build {n}",
        deliver: "telegram",
        deliver_extra: { chat_id: "{build.chat}" },
      },
    },
    recorderAgent("agent reply"),
  );
  node = await startNode(
    {
      ...config,
      platforms: {
        ...(config.platforms as object),
        telegram: { enabled: true, token: "1:T", base_url: telegram.url, home_channel: "-100999" },
      },
    },
    { files: { "agent/recorder.sh": RECORDER_AGENT } },
  );
});
afterAll(async () => {
  await node.stop();
  await Promise.all([telegram.close(), redis.cleanup()]);
});

const sends = () =>
  telegram.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => r.json as Record<string, unknown>);

describe("state.backend: redis — a run's recipient the event filled with braces", () => {
  it("is delivered to once the run is taken from the shared queue", async () => {
    const res = await postJson(node.url("/webhooks/ci"), { n: 1, build: { chat: "{team}" } });
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(sends()).toContainEqual({ chat_id: "{team}", text: "agent reply" }), {
      timeout: 15_000,
    });
  });

  it("a placeholder the event had no field for is still refused, never sent", async () => {
    const res = await postJson(node.url("/webhooks/ci"), { n: 2 });
    expect(res.status).toBe(202);
    await vi.waitFor(
      () =>
        expect(
          node
            .logs()
            .some((l) =>
              l.msg.includes(
                'telegram: deliver_extra.chat_id of route "ci" did not resolve ("{build.chat}" is a template the event did not fill: it has no such field)',
              ),
            ),
        ).toBe(true),
      { timeout: 15_000 },
    );
    expect(sends().filter((s) => s.chat_id === "{build.chat}")).toEqual([]);
  });
});

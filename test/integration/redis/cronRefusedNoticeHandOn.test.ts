import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { fakeClock } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode, withPlatform } from "../../helpers/redisCluster.js";
import { deliveriesRetrying } from "../../helpers/telegramHandOn.js";

/**
 * With state.backend: redis, the failure notice of a fired cron job's model run, handed on while its delivery
 * waits to retry, is delivered by the instance that takes the job over; when the target then refuses it, that
 * instance fails the run with the model's reason (docs/agent.md, "A run that fails"), not the refusal, which
 * is the delivery's failure. Real sockets: a Chat Completions fake answering 401, a Bot API fake answering
 * 503 while the first instance delivers and 400 once the second does.
 */
let tg: FakeApi;
let redis: TestRedis;
let refusing = false;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  [tg, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    return refusing
      ? { status: 400, json: { ok: false, error_code: 400, description: "Bad Request: chat not found" } }
      : { status: 503, json: { ok: false, error_code: 503, description: "Service Unavailable" } };
  });
});
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});
afterAll(async () => {
  await Promise.all([tg.close(), redis.cleanup()]);
});

describe("state.backend: redis — a fired cron job's failure notice, taken over and refused", () => {
  it("fails the run with the model's reason on the instance that took it over", {
    timeout: 30_000,
  }, async () => {
    const model = await startFakeOpenAI();
    try {
      model.script({ status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) });
      const base = clusterConfig(
        redis.url,
        `c${randomUUID()}`,
        { fire: { secret: "INSECURE_NO_AUTH", cron_job: "nightly" } },
        { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
      );
      const cfg = withPlatform(base, "telegram", { enabled: true, token: "1:tg", base_url: tg.url });
      const files = {
        "cron/jobs.json": oneJobStore({
          name: "nightly",
          prompt: "nightly digest",
          next_run: "2099-01-01T00:00:00.000Z",
          deliver: "telegram",
          deliver_extra: { chat_id: "-100" },
        }),
      };
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200, files });
      nodes.push(a);
      const answer = await postJson(a.url("/webhooks/fire"), JSON.stringify({ n: 1 }), {
        "X-Request-Id": "f-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await a.stop();

      refusing = true;
      const b = await startNode(cfg, { files });
      nodes.push(b);
      const failed = await vi.waitFor(
        () => {
          const line = b.logs().find((l) => l.msg === "[cron] nightly: run failed");
          if (line === undefined) throw new Error("no failure yet");
          return line;
        },
        { timeout: 10_000, interval: 20 },
      );
      const sends = tg.requests.filter((r) => r.path.endsWith("/sendMessage"));
      expect(sends).toHaveLength(2);
      expect(sends[1]?.json).toMatchObject({ text: expect.stringContaining("Agent run failed") });
      expect(failed.err).toContain("key rejected");
      expect(failed.err).not.toContain("chat not found");
      // The notice named the event's delivery, on either instance.
      expect(failed.delivery_id).toBe("f-1");
      expect(
        b.logs().some((l) => l.msg.startsWith("[delivery] telegram failed for route cron:nightly")),
      ).toBe(true);
      await b.gateway.stop(); // writes the history out
      const records = readHistory(historyDir(b.home.dir)).filter((r) => r.id === "f-1");
      expect(records).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            kind: "run",
            outcome: "failed",
            error: expect.stringContaining("key rejected"),
          }),
          expect.objectContaining({
            kind: "delivery",
            outcome: "failed",
            error: expect.stringContaining("chat not found"),
          }),
        ]),
      );
    } finally {
      await model.close();
    }
  });
});

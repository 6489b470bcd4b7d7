import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { jobIdOf } from "../../../src/io/state/redis/sharedQueue.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
import type { FakeApi, RecordedRequest } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, startNode } from "../../helpers/redisCluster.js";
import { deliveriesRetrying, handOnConfig, telegramTooMany } from "../../helpers/telegramHandOn.js";

/**
 * docs/durability.md ("Runs already running go on; their finish is recorded when Redis is back"), with
 * state.backend: redis: a reply split into 3 Telegram messages whose 2nd is answered 429 once. Redis freezes
 * (answers nothing) while that retry waits; the retry goes through, and the 3rd part goes out at once: the
 * write that would store that the 2nd was delivered does not hold it back.
 */
const CHAT = "-302";
const RETRY_AFTER_S = 120;
const FIRST = "a".repeat(4000);
const SECOND = "b".repeat(4000);
const THIRD = "c".repeat(1000);
let tg: FakeApi;
let redis: TestRedis;
let home: TempHome;
const nodes: ClusterNode[] = [];
/** How many more times the fake refuses the 2nd part. */
let refuseSecond = 0;

const sends = () =>
  tg.requests.filter(
    (r: RecordedRequest) =>
      r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === CHAT,
  );
/** Which part each message sent holds: 1, 2 or 3. */
const partsSent = () =>
  sends().map((r) => {
    const text = String((r.json as { text?: unknown }).text);
    return text.includes(FIRST) ? 1 : text.includes(SECOND) ? 2 : text.includes(THIRD) ? 3 : 0;
  });

beforeAll(async () => {
  [tg, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  home = tempHome();
  let nextId = 1;
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    const text = String((request.json as { text?: unknown }).text);
    const ok = { json: { ok: true, result: { message_id: nextId++, chat: { id: Number(CHAT) }, text } } };
    if (text.includes(SECOND) && refuseSecond > 0) {
      refuseSecond -= 1;
      return telegramTooMany(RETRY_AFTER_S);
    }
    return ok;
  });
});
afterAll(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([tg.close(), redis.cleanup()]);
  home.cleanup();
});

describe("state.backend: redis — the parts a split message sends after a retry, with Redis frozen", {
  timeout: 30_000,
}, () => {
  it("a Redis frozen as the retry goes through holds back none of the later parts; the finish is recorded once it is back", async () => {
    const prefix = `l${randomUUID()}`;
    const log = join(home.dir, `${randomUUID()}.log`);
    const cfg = handOnConfig({
      redisUrl: redis.url,
      prefix,
      telegramUrl: tg.url,
      route: "later",
      prompt: "{text}",
      chat: CHAT,
      agentLog: log,
    });
    const id = jobIdOf(seenKey("later", "l-1"));
    const connection = new Redis(redis.url);
    const queue = new Queue("runs", { connection, prefix: `${prefix}:bull` });
    refuseSecond = 1;
    try {
      const clockA = fakeClock(Date.now());
      const a = await startNode(cfg, { sleeps: clockA, drainTimeoutMs: 200 });
      nodes.push(a);
      const text = `${FIRST}\n\n${SECOND}\n\n${THIRD}`;
      const answer = await postJson(a.url("/webhooks/later"), JSON.stringify({ text }), {
        "X-Request-Id": "l-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(clockA.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      // Redis freezes while the retry waits; the retry goes through (Telegram is fine), and the 3rd part
      // goes out without waiting for Redis to store that the 2nd did.
      redis.freeze();
      try {
        clockA.advance(RETRY_AFTER_S * 1000);
        await vi.waitFor(() => expect(partsSent()).toEqual([1, 2, 2, 3]), { timeout: 10_000, interval: 20 });
      } finally {
        redis.thaw();
      }
      // Its finish is recorded once Redis is back: the job ends, nothing is sent again.
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 50,
      });
      expect(partsSent()).toEqual([1, 2, 2, 3]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});

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
import {
  agentRuns,
  deliveriesRetrying,
  handOnConfig,
  linesSaying,
  telegramTooMany,
} from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md ("Retries") and docs/durability.md, with state.backend: redis: a reply split
 * into 3 Telegram messages whose 2nd is answered 429 `Retry-After: 120` is handed on (the instance stops
 * past its drain while it waits) and the instance that takes it sends parts 2 and 3 only, the 2nd's
 * retries counted on from the attempt made: part 1 goes out once in all. The platform is a Telegram fake
 * on loopback; the instances' retries wait on the test's clocks.
 */
const CHAT = "-301";
const RETRY_AFTER_S = 120;
/** Three paragraphs, each under Telegram's 4096 characters, together over two messages' worth. */
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
    if (text.includes(SECOND) && refuseSecond > 0) {
      refuseSecond -= 1;
      return telegramTooMany(RETRY_AFTER_S);
    }
    return { json: { ok: true, result: { message_id: nextId++, chat: { id: Number(CHAT) }, text } } };
  });
});
afterAll(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([tg.close(), redis.cleanup()]);
  home.cleanup();
});

describe("state.backend: redis — a split message handed on while it waits to retry a part", {
  timeout: 30_000,
}, () => {
  it("is sent on by the next instance from the part it retries, that part's attempts counted on", async () => {
    const prefix = `p${randomUUID()}`;
    const log = join(home.dir, `${randomUUID()}.log`);
    const cfg = handOnConfig({
      redisUrl: redis.url,
      prefix,
      telegramUrl: tg.url,
      route: "long",
      prompt: "{text}",
      chat: CHAT,
      agentLog: log,
    });
    const id = jobIdOf(seenKey("long", "p-1"));
    const connection = new Redis(redis.url);
    const queue = new Queue("runs", { connection, prefix: `${prefix}:bull` });
    // Refused on the first instance, and once more on the next one.
    refuseSecond = 2;
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const text = `${FIRST}\n\n${SECOND}\n\n${THIRD}`;
      const answer = await postJson(a.url("/webhooks/long"), JSON.stringify({ text }), {
        "X-Request-Id": "p-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      expect(linesSaying(a, `retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)).toHaveLength(1);
      await a.stop();
      expect(partsSent()).toEqual([1, 2]);

      // Kept with the reply: the 1st part was delivered, the 2nd's attempt made.
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      expect(await job.getState()).toBe("delayed");
      const { retry } = job.data as { retry?: { attempts: number; partsDelivered?: number } };
      expect(retry?.attempts).toBe(1);

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      nodes.push(b);
      await job.promote();
      await vi.waitFor(
        () => expect(linesSaying(b, "handed on waiting to retry — retry 1/3 in ")).toHaveLength(1),
        {
          timeout: 10_000,
          interval: 20,
        },
      );
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(partsSent()).toEqual([1, 2]);

      // The 2nd part's retry, refused again: its 2nd retry, not a 1st.
      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(partsSent()).toEqual([1, 2, 2]), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(linesSaying(b, "retry 2/3 in 120000 ms")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(linesSaying(b, "retry 1/3 in 120000 ms")).toHaveLength(0);

      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(linesSaying(b, "telegram: delivered for route long")).toHaveLength(1);
      expect(partsSent()).toEqual([1, 2, 2, 2, 3]);
      expect(agentRuns(log)).toEqual(["p-1"]);
      // What the first instance stored (the parts delivered before the one it retries), and the next one said.
      expect(retry?.partsDelivered).toBe(1);
      expect(linesSaying(b, "handed on waiting to retry")[0]?.msg).toMatch(
        / ms \(part 2; part 1 was delivered\)$/,
      );
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});

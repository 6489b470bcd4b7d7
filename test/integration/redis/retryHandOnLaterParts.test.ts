import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { jobIdOf } from "../../../src/io/state/redis/sharedQueue.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
import type { FakeApi, FakeReply, RecordedRequest } from "../../fakes/httpFake.js";
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
 * into 3 Telegram messages whose 2nd is answered 429 once; the retry goes through, and the instance is
 * stopped (past its drain) while it sends the 3rd. What it stored by then says 2 parts went out (what a
 * killed instance leaves too), and the instance that takes the job sends the 3rd only: no part twice.
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
/** Set while the fake holds its answer to the 3rd part: called, it answers. */
let holdThird: ((reply: FakeReply) => void) | undefined;
let holdingThird = false;

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
    if (text.includes(THIRD) && holdingThird) {
      holdingThird = false;
      return new Promise<FakeReply>((resolve) => {
        holdThird = resolve;
      });
    }
    return ok;
  });
});
afterAll(async () => {
  holdThird?.({ status: 500, json: { ok: false } });
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([tg.close(), redis.cleanup()]);
  home.cleanup();
});

describe("state.backend: redis — a split message handed on as it sends the parts after a retry", {
  timeout: 30_000,
}, () => {
  it("stores each part's send, so the next instance sends only the parts not yet delivered", async () => {
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
    holdingThird = true;
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
      // The 2nd part's retry goes through; the 3rd is sent and its answer held.
      clockA.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(partsSent()).toEqual([1, 2, 2, 3]), { timeout: 10_000, interval: 20 });

      // What an instance killed now leaves in Redis: parts 1 and 2 delivered, the 3rd to send at once.
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      const { retry } = job.data as { retry?: { partsDelivered?: number; attempts: number; dueAt: number } };
      expect(retry?.partsDelivered).toBe(2);
      expect(retry?.attempts).toBe(0);
      expect(retry?.dueAt).toBeLessThanOrEqual(Date.now());

      // Stopped while the 3rd part's request is under way: handed on at once.
      await a.stop();
      const b = await startNode(cfg, { sleeps: fakeClock(Date.now()) });
      nodes.push(b);
      if ((await queue.getJobState(id)) === "delayed") await (await queue.getJob(id))?.promote();
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(partsSent()).toEqual([1, 2, 2, 3, 3]);
      expect(linesSaying(b, "telegram: delivered for route later")).toHaveLength(1);
      expect(linesSaying(b, "handed on — goes on now")[0]?.msg).toMatch(
        /goes on now \(part 3; parts 1-2 were delivered\)$/,
      );
      expect(agentRuns(log)).toEqual(["l-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});

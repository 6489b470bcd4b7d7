import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
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
import { sample } from "../../helpers/metrics.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * docs/durability.md and docs/delivery-targets.md, "Retries", with state.backend: redis: a delivery whose
 * instance stops (past its drain) while it waits out the platform's Retry-After is handed on when that retry
 * is due, not at once, and the instance that takes it counts its attempts on: 1 attempt and 3 retries in
 * all, across the two instances. The platform is a Telegram fake on loopback that answers every message 429
 * with `Retry-After: 120`; the instances' retries wait on the test's clocks.
 */
const OPEN = "INSECURE_NO_AUTH";
const CHAT = "-300";
const RETRY_AFTER_S = 120;
let tg: FakeApi;
let redis: TestRedis;
let home: TempHome;
const nodes: ClusterNode[] = [];

const sends = () =>
  tg.requests.filter(
    (r: RecordedRequest) =>
      r.path.endsWith("/sendMessage") && String((r.json as { chat_id?: unknown }).chat_id) === CHAT,
  );

beforeAll(async () => {
  [tg, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  home = tempHome();
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    return {
      status: 429,
      headers: { "Retry-After": String(RETRY_AFTER_S) },
      json: {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${RETRY_AFTER_S}`,
        parameters: { retry_after: RETRY_AFTER_S },
      },
    };
  });
});
afterAll(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await Promise.all([tg.close(), redis.cleanup()]);
  home.cleanup();
});

/** One run at a time; the agent notes each run in `agentLog` and answers with the prompt. */
function config(prefix: string, agentLog: string): Record<string, unknown> {
  const base = clusterConfig(
    redis.url,
    prefix,
    { slow: { secret: OPEN, prompt: "event {n}", deliver: "telegram", deliver_extra: { chat_id: CHAT } } },
    {
      provider: "command",
      command: ["sh", "-c", 'echo "$SVC_DELIVERY_ID" >> "$0"; cat', agentLog],
      max_concurrent_runs: 1,
    },
  );
  return {
    ...base,
    platforms: {
      ...(base.platforms as Record<string, unknown>),
      telegram: { enabled: true, token: "1:hand-on", base_url: tg.url },
    },
  };
}

const retrying = async (node: ClusterNode) =>
  sample(await (await fetch(node.url("/metrics"))).text(), "svc_deliveries_retrying");
const said = (node: ClusterNode, part: string) => node.logs().filter((l) => l.msg.includes(part));
const agentRuns = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : [];

describe("state.backend: redis — a delivery handed on while it waits to retry", { timeout: 30_000 }, () => {
  it("waits out what is left of the platform's Retry-After on the next instance, and its attempts count on", async () => {
    const prefix = `h${randomUUID()}`;
    const log = join(home.dir, `${randomUUID()}.log`);
    const cfg = config(prefix, log);
    const id = jobIdOf(seenKey("slow", "h-1"));
    const connection = new Redis(redis.url);
    const queue = new Queue("runs", { connection, prefix: `${prefix}:bull` });
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const before = Date.now();
      const answer = await postJson(a.url("/webhooks/slow"), JSON.stringify({ n: "h-1" }), {
        "X-Request-Id": "h-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await retrying(a)).toBe(1), { timeout: 10_000, interval: 20 });
      const after = Date.now();
      expect(said(a, `retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)).toHaveLength(1);
      await a.stop();
      expect(sends()).toHaveLength(1);

      // Kept with the reply: when the retry is due and the attempt made; the job stays delayed until then.
      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      expect(await job.getState()).toBe("delayed");
      const { retry } = job.data as { retry?: { dueAt: number; attempts: number } };
      expect(retry?.attempts).toBe(1);
      const dueAt = retry?.dueAt ?? 0;
      expect(dueAt).toBeGreaterThanOrEqual(before + RETRY_AFTER_S * 1000);
      expect(dueAt).toBeLessThanOrEqual(after + RETRY_AFTER_S * 1000);
      const score = Number(await connection.zscore(`${prefix}:bull:runs:delayed`, id));
      expect(Math.floor(score / 0x1000)).toBeGreaterThanOrEqual(dueAt);

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      nodes.push(b);
      // Let run before it is due (as by an instance whose clock runs ahead): the instance that takes it
      // still waits out the rest, out of its slot.
      await job.promote();
      await vi.waitFor(() => expect(said(b, "handed on waiting to retry — retry 1/3 in ")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(async () => expect(await retrying(b)).toBe(1), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      expect(sends()).toHaveLength(1);

      // Each retry answered 429 again: the 2nd and the 3rd, then given up — 4 attempts in all.
      for (const [n, next] of [
        [2, "retry 2/3 in 120000 ms"],
        [3, "retry 3/3 in 120000 ms"],
      ] as const) {
        clock.advance(RETRY_AFTER_S * 1000);
        await vi.waitFor(() => expect(sends()).toHaveLength(n), { timeout: 10_000, interval: 20 });
        await vi.waitFor(() => expect(said(b, next)).toHaveLength(1), { timeout: 10_000, interval: 20 });
        await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
      }
      clock.advance(RETRY_AFTER_S * 1000);
      await vi.waitFor(() => expect(said(b, "gave up after 3 retries")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(sends()).toHaveLength(4);
      expect(agentRuns(log)).toEqual(["h-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});

import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../src/actors/runs.js";
import { openRedisState, type RedisState } from "../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../src/streams/context.js";
import { type CapturedLog, captureLogger } from "../../fakes/logCapture.js";
import { pendingRun } from "../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";

/**
 * Redis losing svc's keys while the gateway runs, without the gateway restarting: a Redis that snapshots
 * (Docker's default) restarted before its first snapshot, FLUSHALL under the same server, and a run whose job
 * was deleted while it ran. Each is said in the log as what it is. Each test has a Redis of its own.
 */

const ROUTES: Record<string, unknown> = {
  pr: { name: "pr", profile: "default", secret: "s", route: { prompt: "p", deliver: "log" } },
};

async function stateOn(
  server: TestRedis,
  log: CapturedLog,
  execute: (run: QueuedRun) => Promise<unknown> = async () => {},
): Promise<RedisState> {
  return openRedisState({
    settings: { backend: "redis", redis_url: server.url, redis_key_prefix: `dl${randomUUID()}` } as never,
    configFile: "config.yaml",
    logger: log.logger,
    maxConcurrentRuns: 1,
    rateLimit: 1000,
    elapsed: () => 0,
    lookup: (name) => ROUTES[name] as ResolvedRoute | undefined,
    execute,
  });
}

const queued = (deliveryId: string) =>
  ({
    ...pendingRun(deliveryId),
    route: { prompt: "p", deliver: "log" },
    payload: {},
    headers: {},
  }) as unknown as AcceptedEvent;

describe("Redis losing svc's keys while the gateway runs (state.backend: redis)", { timeout: 40_000 }, () => {
  it("a Redis that snapshots (save 3600 1, appendonly no), restarted before its first snapshot, is said at WARN to have lost what it held", async () => {
    const server = await startTestRedis({ args: ["--save", "3600 1"] });
    const log = captureLogger();
    const state = await stateOn(server, log);
    const restarted = () =>
      log.messages().filter((msg) => msg.includes("restarted while it was unreachable"));
    try {
      expect(await state.enqueueRun(queued("d-lost"))).toBe(true);
      await server.stop();
      await server.start();
      await vi.waitFor(() => expect(restarted()).toHaveLength(1), { timeout: 20_000, interval: 50 });
      expect(restarted()).toEqual([
        `[state] Redis at ${server.url} restarted while it was unreachable (its run_id changed) without the data it held (what it wrote since its last snapshot or append-only write, or all of it when restarted without its data volume): the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held are gone (a sender's retry of an event it had accepted runs as a new one)`,
      ]);
      const line = log.lines().find((raw) => raw.includes("restarted while it was unreachable")) as string;
      expect((JSON.parse(line) as { level: number }).level).toBe(40);
    } finally {
      await state.stop(200);
      await state.disconnect();
      await server.cleanup();
    }
  });

  it("FLUSHALL under the same server (its run_id unchanged) is said once at WARN, and svc's key is written again", async () => {
    const server = await startTestRedis();
    const log = captureLogger();
    const state = await stateOn(server, log);
    const client = new Redis(server.url);
    const deleted = () => log.messages().filter((msg) => msg.includes("were deleted"));
    try {
      const seen = (await client.keys("*:server-seen"))[0] as string;
      const runId = /run_id:(\w+)/.exec(await client.info("server"))?.[1];
      await client.flushall();
      // Found beside the next liveness PING (every 5 s).
      await vi.waitFor(() => expect(deleted()).toHaveLength(1), { timeout: 15_000, interval: 50 });
      expect(deleted()).toEqual([
        `[state] svc's keys in Redis at ${server.url} were deleted while it kept running (its run_id unchanged: FLUSHALL/FLUSHDB): the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held are gone (a sender's retry of an event it had accepted runs as a new one)`,
      ]);
      await vi.waitFor(async () => expect(await client.get(seen)).toBe(`${runId} lost`), {
        timeout: 5_000,
        interval: 50,
      });
      // The key back, the next PING finds it: said once. No restart is said.
      expect(deleted()).toHaveLength(1);
      expect(log.messages().filter((msg) => msg.includes("restarted"))).toEqual([]);
    } finally {
      client.disconnect();
      await state.stop(200);
      await state.disconnect();
      await server.cleanup();
    }
  });

  it("a run whose job was deleted while it ran (Missing key for job) is said not to run again, not to have had its lock expire", async () => {
    const server = await startTestRedis();
    const log = captureLogger();
    const started: QueuedRun[] = [];
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    const state = await stateOn(server, log, async (run) => {
      started.push(run);
      await going;
    });
    const client = new Redis(server.url);
    const notRecorded = () => log.messages().filter((msg) => msg.includes("did not record its end"));
    try {
      await state.enqueueRun(queued("d-gone"));
      state.start();
      await vi.waitFor(() => expect(started).toHaveLength(1), { timeout: 10_000, interval: 20 });
      await client.flushall();
      goOn();
      await vi.waitFor(() => expect(notRecorded()).toHaveLength(1), { timeout: 15_000, interval: 50 });
      expect(notRecorded()[0]).toMatch(
        /^\[webhook\] pr: run of delivery d-gone ended here, but Redis did not record its end \(Missing key for job j-pr%3Ad-gone\. [^)]*\): its job is gone from Redis \(restarted empty, flushed or evicted\): it ran here once and does not run again$/,
      );
    } finally {
      goOn();
      client.disconnect();
      await state.stop(200);
      await state.disconnect();
      await server.cleanup();
    }
  });
});

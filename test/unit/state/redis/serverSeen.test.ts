import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
  LIVENESS_PING_MS,
} from "../../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { watchServerSeen } from "../../../../src/io/state/redis/serverSeen.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

/**
 * svc's key `<prefix>:server-seen` that Redis refused to write (full under `noeviction`, Redis's default) is
 * not one deleted: only a key known to be there and then missing is said lost. The liveness PING's interval
 * is faked and moved by the test; each test has a Redis of its own.
 */

const HELD =
  "the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held are gone (a sender's retry of an event it had accepted runs as a new one)";

/** SETs Redis refused so far (OOM): how a test knows a check's write was sent and refused. */
async function refusedSets(admin: Redis): Promise<number> {
  const stats = await admin.info("commandstats");
  return Number(/^cmdstat_set:.*\brejected_calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

const runIdOf = async (admin: Redis) => /^run_id:(\w+)/m.exec(await admin.info("server"))?.[1];

/**
 * Watches `server` as the gateway does, its liveness PING moved by `ping()`; `pingUntil` PINGs until `check`
 * passes.
 */
async function watching(server: TestRedis, options = commandOptions()) {
  const log = captureLogger();
  const keys = redisKeys(`seen${randomUUID()}`);
  const health = createRedisHealth(server.url, log.logger);
  const redis = await connectRedis(server.url, "config.yaml", options);
  health.watch("commands", redis);
  await health.keepAlive(async () => undefined);
  await watchServerSeen({ redis, keys, health, logger: log.logger, label: server.url });
  const ping = () => vi.advanceTimersByTimeAsync(LIVENESS_PING_MS);
  return {
    redis,
    seenKey: keys.serverSeen(),
    said: (text: string) => log.messages().filter((msg) => msg.includes(text)),
    ping,
    pingUntil: (check: () => Promise<unknown> | unknown) =>
      vi.waitFor(
        async () => {
          await ping();
          await check();
        },
        { timeout: 5000, interval: 20 },
      ),
  };
}

/**
 * Runs `test` on a redis-server of its own started with `args`, with `admin` (a plain client) on it and the
 * liveness PING's interval faked; `watch` watches it (`watching`). All of it is stopped after.
 */
async function onOwnRedis(
  args: string[],
  test: (own: { server: TestRedis; admin: Redis; watch: () => ReturnType<typeof watching> }) => Promise<void>,
): Promise<void> {
  const server = await startTestRedis({ args });
  const admin = new Redis(server.url);
  vi.useFakeTimers({ toFake: ["setInterval"] });
  let redis: Redis | undefined;
  try {
    await test({
      server,
      admin,
      watch: async () => {
        const watched = await watching(server);
        redis = watched.redis;
        return watched;
      },
    });
  } finally {
    vi.useRealTimers();
    redis?.disconnect();
    admin.disconnect();
    await server.cleanup();
  }
}

describe("svc's server-seen key in Redis (state.backend: redis)", { timeout: 30_000 }, () => {
  it("a Redis full at the start (maxmemory reached under noeviction) refuses the key: the PINGs write it again without a word, and once Redis took it, a FLUSHALL is said at WARN", async () => {
    await onOwnRedis([], async ({ server, admin, watch }) => {
      const runId = await runIdOf(admin);
      await admin.config("SET", "maxmemory", "1");
      const { seenKey, said, ping, pingUntil } = await watch();
      expect(await refusedSets(admin)).toBe(1);
      // The PING finds the key missing, and its write is refused again: nothing was lost, nothing is said.
      await ping();
      await vi.waitFor(async () => expect(await refusedSets(admin)).toBe(2), { timeout: 5000, interval: 20 });
      expect(said("were deleted")).toEqual([]);
      await ping();
      await vi.waitFor(async () => expect(await refusedSets(admin)).toBe(3), { timeout: 5000, interval: 20 });
      expect(said("were deleted")).toEqual([]);
      // Room again: the next PING writes it.
      await admin.config("SET", "maxmemory", "0");
      await pingUntil(async () => expect(await admin.get(seenKey)).toBe(`${runId} lost`));
      expect(said("were deleted")).toEqual([]);
      // Known to be there, then gone: said once.
      await admin.flushall();
      await pingUntil(() => expect(said("were deleted")).toHaveLength(1));
      expect(said("were deleted")).toEqual([
        `[state] svc's keys in Redis at ${server.url} were deleted while it kept running (its run_id unchanged: FLUSHALL/FLUSHDB): ${HELD}`,
      ]);
      await vi.waitFor(async () => expect(await admin.get(seenKey)).toBe(`${runId} lost`), {
        timeout: 5000,
        interval: 20,
      });
      await ping();
      await admin.ping();
      expect(said("were deleted")).toHaveLength(1);
    });
  });

  it("a Redis restarted empty that comes back full: the restart is said once, and the PINGs after it, finding the key whose write it refused missing, say no deletion", async () => {
    // Full at each start (maxmemory 1 from its arguments) until the test makes room.
    await onOwnRedis(["--maxmemory", "1"], async ({ server, admin, watch }) => {
      await admin.config("SET", "maxmemory", "0");
      const { seenKey, said, ping } = await watch();
      expect(await admin.exists(seenKey)).toBe(1);
      admin.disconnect();
      await server.stop();
      await server.start();
      await vi.waitFor(() => expect(said("restarted while it was unreachable")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      expect(said("restarted while it was unreachable")[0]).toContain(
        `restarted while it was unreachable (its run_id changed), and it keeps nothing across a restart (appendonly no, save ""): ${HELD}`,
      );
      await admin.connect();
      await vi.waitFor(async () => expect(await refusedSets(admin)).toBe(1), { timeout: 5000, interval: 20 });
      await ping();
      await vi.waitFor(async () => expect(await refusedSets(admin)).toBe(2), { timeout: 5000, interval: 20 });
      expect(said("were deleted")).toEqual([]);
      expect(said("restarted while it was unreachable")).toHaveLength(1);
    });
  });

  it("a Redis restarted without its data whose first GET after the reconnect fails: the next PING says the restart lost the data, not a deletion, and not nothing", async () => {
    // Snapshots only (save 3600 1, none taken yet): a restart finds no file, and svc is told it keeps something.
    await onOwnRedis(["--save", "3600 1"], async ({ server, admin, watch }) => {
      expect(await admin.config("GET", "save")).toEqual(["save", "3600 1"]);
      const { redis, seenKey, said, ping, pingUntil } = await watch();
      expect(await admin.exists(seenKey)).toBe(1);
      const get = vi.spyOn(redis, "get").mockRejectedValueOnce(new Error("Connection is closed."));
      admin.disconnect();
      await server.stop();
      await server.start();
      await vi.waitFor(() => expect(get).toHaveBeenCalledTimes(1), { timeout: 10_000, interval: 20 });
      await admin.connect();
      const restarted = await runIdOf(admin);
      await pingUntil(() => expect(said("restarted while it was unreachable")).toHaveLength(1));
      expect(said("restarted while it was unreachable")).toEqual([
        `[state] Redis at ${server.url} restarted while it was unreachable (its run_id changed) without the data it held (what it wrote since its last snapshot or append-only write, or all of it when restarted without its data volume): ${HELD}`,
      ]);
      expect(await admin.get(seenKey)).toBe(`${restarted} lost`);
      await ping();
      await admin.ping();
      expect(said("restarted while it was unreachable")).toHaveLength(1);
      expect(said("were deleted")).toEqual([]);
    });
  });

  it("under an allkeys-* policy the key gone is said deleted or evicted, with what may be gone and the fix: the key, never read, is among the first evicted", async () => {
    await onOwnRedis(["--maxmemory-policy", "allkeys-lru"], async ({ server, admin, watch }) => {
      const { seenKey, said, ping, pingUntil } = await watch();
      await ping();
      await admin.del(seenKey);
      await pingUntil(() => expect(said("were deleted")).toHaveLength(1));
      expect(said("were deleted")).toEqual([
        `[state] svc's keys in Redis at ${server.url} were deleted (FLUSHALL/FLUSHDB) or evicted (maxmemory-policy allkeys-lru) while it kept running (its run_id unchanged): the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held may be gone (a sender's retry of an event it had accepted then runs as a new one) — set maxmemory-policy noeviction in its redis.conf (and CONFIG SET maxmemory-policy noeviction for the running server)`,
      ]);
    });
  });
});

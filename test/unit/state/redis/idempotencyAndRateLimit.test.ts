import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
} from "../../../../src/io/state/redis/connection.js";
import {
  createSharedIdempotency,
  DELIVERING_TTL_SECONDS,
  DELIVERY_WAIT_MS,
} from "../../../../src/io/state/redis/idempotency.js";
import { redisKeys } from "../../../../src/io/state/redis/keys.js";
import { createSharedRateLimiter } from "../../../../src/io/state/redis/rateLimit.js";
import { createFixedWindowLimiter } from "../../../../src/streams/rateLimiter.js";
import { RecordPendingError } from "../../../../src/streams/recordPending.js";
import { StateUnavailableError } from "../../../../src/streams/stateUnavailable.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
const clients: Redis[] = [];
/** A client of the file's Redis (or of `of`), disconnected after its test. */
const client = async (of: TestRedis = server, options = commandOptions()) => {
  const redis = await connectRedis(of.url, "config.yaml", options);
  clients.push(redis);
  return redis;
};

/** A client of `own` that does not reconnect by itself: its test brings it back (`connect()`) when it means to. */
const clientNotReconnecting = (own: TestRedis) =>
  client(own, { ...commandOptions(), retryStrategy: () => null });

/** Kills `own` and waits until `redis`, one of `clientNotReconnecting`'s, has given up on it. */
async function killedUnder(redis: Redis, own: TestRedis): Promise<void> {
  await own.stop();
  await expect.poll(() => redis.status, { timeout: 5000, interval: 10 }).toBe("end");
}

beforeAll(async () => {
  server = await startTestRedis();
});
// A test's clients go with it: one left reconnecting to a Redis its test stopped arms a new timer each
// attempt, in whatever test runs then.
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});
afterAll(async () => {
  await server.cleanup();
});

describe("shared idempotency (SET NX EX)", () => {
  it("accepts one delivery key once across several clients: pending for a minute until kept, then the hour, under the prefix", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    // Nothing keeps the key while they answer: the duplicates wait (briefly here) for it to be stored.
    const wait = { pollMs: 5, waitMs: 30_000, pendingWaitMs: 50 };
    const instances = await Promise.all(
      [1, 2, 3].map(async () => createSharedIdempotency(await client(), keys, health, 3600, 60, wait)),
    );
    const answers = await Promise.all(
      instances.flatMap((seen) => [seen.checkAndAdd("r:1"), seen.checkAndAdd("r:1")]),
    );
    expect(answers.filter((duplicate) => !duplicate)).toHaveLength(1);
    const raw = await client();
    // Until what the id stands for is stored, an instance killed meanwhile must not hold it for an hour.
    const pending = await raw.ttl(keys.seen("r:1"));
    expect(pending).toBeGreaterThan(0);
    expect(pending).toBeLessThanOrEqual(60);
    await instances[2]?.keep("r:1");
    expect(await raw.ttl(keys.seen("r:1"))).toBeGreaterThan(3500);
    expect(await instances[1]?.checkAndAdd("r:2")).toBe(false);
    // A forgotten id is not brought back by a late keep.
    await instances[1]?.forget("r:2");
    await instances[1]?.keep("r:2");
    expect(await raw.exists(keys.seen("r:2"))).toBe(0);
  });

  it("forgets a key so the sender's retry runs", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const seen = createSharedIdempotency(await client(), keys, createRedisHealth("test", silentLogger()));
    expect(await seen.checkAndAdd("r:x")).toBe(false);
    await seen.forget("r:x");
    expect(await seen.checkAndAdd("r:x")).toBe(false);
    await seen.keep("r:x");
    expect(await seen.checkAndAdd("r:x")).toBe(true);
  });

  it("a duplicate whose record stays pending past the wait with nothing stored under it (its instance killed before storing) is refused 503 with the record's time left, not taken for a duplicate", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const storedKeys = new Set<string>();
    const stored = async (key: string) => storedKeys.has(key);
    const wait = { pollMs: 5, waitMs: 30_000, pendingWaitMs: 30 };
    const a = createSharedIdempotency(await client(), keys, health, 3600, 60, wait, stored);
    const b = createSharedIdempotency(await client(), keys, health, 3600, 60, wait, stored);
    // A recorded the id and was killed before storing its run (it neither keeps nor forgets).
    expect(await a.checkAndAdd("r:killed")).toBe(false);
    const refused = await b.checkAndAdd("r:killed").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RecordPendingError);
    expect(refused).toBeInstanceOf(StateUnavailableError);
    const after = (refused as RecordPendingError).retryAfterSeconds;
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(60);
    // Killed after storing, before giving the id its hour: the retry is the duplicate it is.
    expect(await a.checkAndAdd("r:stored")).toBe(false);
    storedKeys.add("r:stored");
    expect(await b.checkAndAdd("r:stored")).toBe(true);
    // Once the killed instance's record is gone, the retry is a new delivery.
    await (await client()).del(keys.seen("r:killed"));
    expect(await b.checkAndAdd("r:killed")).toBe(false);
  });

  it("a sender's retry that finds the record of its 503 not yet removed (Redis just back) is processed once it is, not answered duplicate", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    // One connection for both instances: B's SET reaches Redis before A's removal of its record.
    const shared = await client();
    const a = createSharedIdempotency(shared, keys, health, 3600, 60, { pollMs: 5, waitMs: 30_000 });
    const b = createSharedIdempotency(shared, keys, health, 3600, 60, { pollMs: 5, waitMs: 30_000 });
    // A recorded the id, could not store the event (Redis went away) and answered 503; its removal of
    // the record waits for its connection to be back, and the sender's retry reaches B first.
    expect(await a.checkAndAdd("r:503")).toBe(false);
    const retry = b.checkAndAdd("r:503");
    void a.forget("r:503");
    expect(await retry).toBe(false);
    // B recorded it for itself: pending until B stores the event, then the hour.
    await b.keep("r:503");
    expect(await (await client()).ttl(keys.seen("r:503"))).toBeGreaterThan(3500);
    expect(await a.checkAndAdd("r:503")).toBe(true);
  });

  it("a 503's record removed once its connection is back is its own only: the record the sender's retry made on another instance meanwhile stays, and the retry after it is a duplicate", async () => {
    const own = await startTestRedis();
    try {
      const keys = redisKeys(`t${randomUUID()}`);
      const health = createRedisHealth("test", silentLogger());
      // A's connection does not reconnect by itself: the test brings it back once B has stored the retry.
      const redisA = await clientNotReconnecting(own);
      const a = createSharedIdempotency(redisA, keys, health);
      expect(await a.checkAndAdd("r:lost-then-retried")).toBe(false);
      // Redis goes away before A stores the event: A answers 503, and its removal waits for the connection.
      await killedUnder(redisA, own);
      await a.forget("r:lost-then-retried");
      // Redis is back (without the record: no persistence); the sender's retry reaches B, which stores it.
      await own.start();
      const redisB = await client(own);
      const b = createSharedIdempotency(redisB, keys, health);
      expect(await b.checkAndAdd("r:lost-then-retried")).toBe(false);
      await b.keep("r:lost-then-retried");
      // A's connection is back: its removal runs, on the same connection before this PING.
      await redisA.connect();
      await redisA.ping();
      expect(await redisB.ttl(keys.seen("r:lost-then-retried"))).toBeGreaterThan(3500);
      expect(await b.checkAndAdd("r:lost-then-retried")).toBe(true);
    } finally {
      await own.cleanup();
    }
  });

  it("a duplicate reaching another instance while the original's direct delivery is under way waits for its outcome: failed (forgotten) or delivered", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const poll = { pollMs: 5, waitMs: 60_000 };
    const aRedis = await client();
    const a = createSharedIdempotency(aRedis, keys, health, 3600, 60, poll);
    const b = createSharedIdempotency(await client(), keys, health, 3600, 60, poll);
    const raw = await client();
    /** As dispatch does: the id kept for the hour, then marked (after it, on the same connection). */
    const begin = async (key: string) => {
      void a.keep(key);
      a.delivering(key);
      await aRedis.ping();
    };

    // The delivery fails on A: the duplicate on B is not told `duplicate` (its sender would never retry).
    expect(await a.checkAndAdd("dd:1")).toBe(false);
    await begin("dd:1");
    // Pending while it runs: an instance killed mid-delivery holds the id a minute at most.
    const pending = await raw.ttl(keys.seen("dd:1"));
    expect(pending).toBeGreaterThan(0);
    expect(pending).toBeLessThanOrEqual(60);
    expect(await b.checkAndAdd("dd:1")).toBe(true);
    const failed = b.deliveredElsewhere("dd:1");
    expect(failed).toBeDefined();
    await a.forget("dd:1");
    expect(await failed).toBe(false);

    // Stopped on A (its gateway's stop ended the delivery's wait, nothing sent): the duplicate on B is told
    // so (503 Shutting down, as its sender), not failed; the key is forgotten, so the sender's retry delivers.
    expect(await a.checkAndAdd("dd:s")).toBe(false);
    await begin("dd:s");
    expect(await b.checkAndAdd("dd:s")).toBe(true);
    const stopped = b.deliveredElsewhere("dd:s");
    a.stopped("dd:s");
    await a.forget("dd:s");
    expect(await stopped).toBe("stopped");
    expect(await b.checkAndAdd("dd:s")).toBe(false);

    // Delivered on A: the duplicate on B is one; once delivered, a later one is answered at once.
    expect(await a.checkAndAdd("dd:2")).toBe(false);
    await begin("dd:2");
    expect(await b.checkAndAdd("dd:2")).toBe(true);
    const done = b.deliveredElsewhere("dd:2");
    a.delivered("dd:2");
    expect(await done).toBe(true);
    expect(await b.checkAndAdd("dd:2")).toBe(true);
    expect(b.deliveredElsewhere("dd:2")).toBeUndefined();
    expect(await raw.ttl(keys.seen("dd:2"))).toBeGreaterThan(3500);

    // A delivery still marked under way after the wait (its instance killed mid-way) counts as delivered.
    const short = createSharedIdempotency(await client(), keys, health, 3600, 60, { pollMs: 5, waitMs: 20 });
    expect(await a.checkAndAdd("dd:3")).toBe(false);
    await begin("dd:3");
    expect(await short.checkAndAdd("dd:3")).toBe(true);
    expect(await short.deliveredElsewhere("dd:3")).toBe(true);
    await a.forget("dd:3"); // ends its renewal

    // An agent event's duplicate is answered at once (once the event is stored).
    expect(await a.checkAndAdd("pr:1")).toBe(false);
    await a.keep("pr:1");
    expect(await b.checkAndAdd("pr:1")).toBe(true);
    expect(b.deliveredElsewhere("pr:1")).toBeUndefined();
  });
  it("a delivery that ends after its delivering lease lapsed (Redis frozen past it) still keeps its id for the hour", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const a = createSharedIdempotency(await client(), keys, health, 3600, 60);
    const raw = await client();
    expect(await a.checkAndAdd("dd:late")).toBe(false);
    a.delivering("dd:late");
    // The 15 s lease ran out while Redis answered nothing; the delivery's mark comes once it is back.
    await vi.waitFor(async () => expect(await raw.get(keys.seen("dd:late"))).not.toBeNull());
    await raw.del(keys.seen("dd:late"));
    a.delivered("dd:late");
    await vi.waitFor(async () => expect(await raw.ttl(keys.seen("dd:late"))).toBeGreaterThan(3500));
    const b = createSharedIdempotency(await client(), keys, health, 3600, 60);
    expect(await b.checkAndAdd("dd:late")).toBe(true);
    expect(b.deliveredElsewhere("dd:late")).toBeUndefined();
  });

  it("a direct delivery made while Redis was down (killed, back with its data after the delivering lease lapsed) gets its hour once the connection is back: the sender's retry is a duplicate, not a second post", async () => {
    const own = await startTestRedis({ persist: true });
    try {
      const keys = redisKeys(`t${randomUUID()}`);
      const health = createRedisHealth("test", silentLogger());
      // A's connection does not reconnect by itself: the test brings it back once Redis is.
      const redisA = await clientNotReconnecting(own);
      // Scaled down (Redis keeps real time): a lease of 1 s, which lapses while Redis is down.
      const lease = { pollMs: 5, waitMs: 30_000, deliveringSeconds: 1 };
      const a = createSharedIdempotency(redisA, keys, health, 3600, 60, lease);
      expect(await a.checkAndAdd("dd:down")).toBe(false);
      void a.keep("dd:down");
      a.delivering("dd:down");
      await redisA.ping();
      await killedUnder(redisA, own);
      // The message went out while Redis was down: its mark is refused unsent.
      a.delivered("dd:down");
      await own.start();
      const raw = await client(own);
      await vi.waitFor(async () => expect(await raw.exists(keys.seen("dd:down"))).toBe(0), {
        timeout: 5000,
        interval: 20,
      });
      await redisA.connect();
      await vi.waitFor(async () => expect(await raw.get(keys.seen("dd:down"))).toBe("delivered"), {
        timeout: 5000,
        interval: 20,
      });
      expect(await raw.ttl(keys.seen("dd:down"))).toBeGreaterThan(3500);
      const b = createSharedIdempotency(raw, keys, health, 3600, 60, lease);
      expect(await b.checkAndAdd("dd:down")).toBe(true);
      expect(b.deliveredElsewhere("dd:down")).toBeUndefined();
    } finally {
      await own.cleanup();
    }
  });

  it("a direct delivery whose mark Redis refused (full) gets its hour once Redis takes writes again, with no reconnect to wait for: the renewal sends the mark again", async () => {
    const own = await startTestRedis();
    try {
      const keys = redisKeys(`t${randomUUID()}`);
      const health = createRedisHealth("test", silentLogger());
      const redisA = await client(own);
      const admin = await client(own);
      // Renewed every third of a 1 s lease.
      const a = createSharedIdempotency(redisA, keys, health, 3600, 60, {
        pollMs: 5,
        waitMs: 30_000,
        deliveringSeconds: 1,
      });
      expect(await a.checkAndAdd("dd:full")).toBe(false);
      void a.keep("dd:full");
      a.delivering("dd:full");
      await redisA.ping();
      // Full: every write is refused (OOM), the mark among them.
      await admin.config("SET", "maxmemory", "1");
      try {
        a.delivered("dd:full");
        await expect(redisA.set(keys.seen("probe"), "1")).rejects.toThrow(/^OOM/);
      } finally {
        await admin.config("SET", "maxmemory", "0");
      }
      await vi.waitFor(async () => expect(await admin.get(keys.seen("dd:full"))).toBe("delivered"), {
        timeout: 5000,
        interval: 20,
      });
      expect(await admin.ttl(keys.seen("dd:full"))).toBeGreaterThan(3500);
    } finally {
      await own.cleanup();
    }
  });

  it("a Redis back full from an outage (OOM) refuses the marks of deliveries made meanwhile, and still takes the removals of the 503s' records sent after them: the senders' retries run, not answered duplicate", async () => {
    const own = await startTestRedis({ persist: true });
    try {
      const keys = redisKeys(`t${randomUUID()}`);
      const health = createRedisHealth("test", silentLogger());
      // A's connection does not reconnect by itself: the test brings it back once Redis is full.
      const redisA = await clientNotReconnecting(own);
      // Its mark sent again every third of a 1 s lease while refused.
      const a = createSharedIdempotency(redisA, keys, health, 3600, 60, {
        pollMs: 5,
        waitMs: 30_000,
        deliveringSeconds: 1,
      });
      expect(await a.checkAndAdd("dd:sent")).toBe(false);
      void a.keep("dd:sent");
      a.delivering("dd:sent");
      // One stored (kept: forgotten by key), one not yet (forgotten by its own token).
      expect(await a.checkAndAdd("r:kept")).toBe(false);
      await a.keep("r:kept");
      expect(await a.checkAndAdd("r:made")).toBe(false);
      await redisA.ping();
      await killedUnder(redisA, own);
      // While Redis is down: a delivery made, and two events whose later step failed (503, failed delivery).
      a.delivered("dd:sent");
      await a.forget("r:kept");
      await a.forget("r:made");
      await own.start();
      const admin = await client(own);
      expect(await admin.exists(keys.seen("r:kept"), keys.seen("r:made"))).toBe(2);
      await admin.config("SET", "maxmemory", "1");
      await expect(admin.set(keys.seen("probe"), "1")).rejects.toThrow(/^OOM/);
      await redisA.connect();
      await vi.waitFor(
        async () => expect(await admin.exists(keys.seen("r:kept"), keys.seen("r:made"))).toBe(0),
        { timeout: 5000, interval: 20 },
      );
      expect(await admin.get(keys.seen("dd:sent"))).not.toBe("delivered");
      // Room again: the mark is sent again by its renewal, with no reconnect to wait for.
      await admin.config("SET", "maxmemory", "0");
      await vi.waitFor(async () => expect(await admin.get(keys.seen("dd:sent"))).toBe("delivered"), {
        timeout: 5000,
        interval: 20,
      });
      expect(await admin.ttl(keys.seen("dd:sent"))).toBeGreaterThan(3500);
    } finally {
      await own.cleanup();
    }
  });

  it("the watch of a delivery under way elsewhere ends after its wait even when the clock is set back meanwhile (NTP)", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const aRedis = await client();
    const a = createSharedIdempotency(aRedis, keys, health, 3600, 60, { pollMs: 5, waitMs: 60_000 });
    const short = createSharedIdempotency(await client(), keys, health, 3600, 60, { pollMs: 5, waitMs: 200 });
    expect(await a.checkAndAdd("dd:back")).toBe(false);
    void a.keep("dd:back");
    a.delivering("dd:back");
    await aRedis.ping();
    // Only Date is faked: the watch's polls stay on real timers.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      expect(await short.checkAndAdd("dd:back")).toBe(true);
      const watched = short.deliveredElsewhere("dd:back");
      vi.setSystemTime(Date.now() - 3_600_000);
      const ended = await Promise.race([
        watched,
        new Promise((resolve) => setTimeout(() => resolve("still watching"), 3000)),
      ]);
      expect(ended).toBe(true);
    } finally {
      vi.useRealTimers();
      await a.forget("dd:back"); // ends its renewal
    }
  });

  it("an instance killed mid-delivery: the duplicate on another instance sees its record go within the watch and is answered failed (502), not duplicate", async () => {
    // In production the record of a delivery under way outlives its instance by at most half the watch.
    expect(DELIVERING_TTL_SECONDS * 1000).toBeLessThanOrEqual(DELIVERY_WAIT_MS / 2);
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    // Scaled down (Redis keeps real time): a record of 1 s against a watch of 3 s.
    const watch = { pollMs: 50, waitMs: 3000, deliveringSeconds: 1 };
    const aRedis = await client();
    const a = createSharedIdempotency(aRedis, keys, health, undefined, undefined, watch);
    const b = createSharedIdempotency(await client(), keys, health, undefined, undefined, watch);
    expect(await a.checkAndAdd("dd:killed")).toBe(false);
    void a.keep("dd:killed");
    a.delivering("dd:killed");
    await aRedis.ping();
    // A is killed mid-delivery: its connection gone, it renews nothing, and neither delivers nor forgets.
    aRedis.disconnect();
    expect(await b.checkAndAdd("dd:killed")).toBe(true);
    const outcome = b.deliveredElsewhere("dd:killed");
    expect(outcome).toBeDefined();
    expect(await outcome).toBe(false);
    // Given up with its id: the sender's next retry is processed (and delivers).
    expect(await b.checkAndAdd("dd:killed")).toBe(false);
    await b.forget("dd:killed");
  });
});

describe("shared fixed-window rate limit", () => {
  it("holds one budget per route across instances and says when the window reopens", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("test", silentLogger());
    const limiters = await Promise.all(
      [1, 2, 3].map(async () =>
        createSharedRateLimiter(await client(), keys, health, { limit: 10, windowMs: 60_000 }),
      ),
    );
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => limiters[i % 3]?.tryAcquire("hook") as Promise<boolean>),
    );
    expect(answers.filter(Boolean)).toHaveLength(10);
    expect(await limiters[0]?.tryAcquire("other")).toBe(true);
    const ms = limiters[2]?.msUntilReset("hook") ?? 0;
    expect(ms).toBeGreaterThan(50_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });

  it("opens a new window once the old one expired", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const limiter = createSharedRateLimiter(await client(), keys, createRedisHealth("t", silentLogger()), {
      limit: 1,
      windowMs: 60_000,
    });
    expect(await limiter.tryAcquire("hook")).toBe(true);
    expect(await limiter.tryAcquire("hook")).toBe(false);
    // The window's end is the key's expiry: dropping it is what its end does.
    await (await client()).del(keys.rate("hook"));
    expect(await limiter.tryAcquire("hook")).toBe(true);
  });

  it("a reload that changes the limit applies to an open window at once, with the answers of the local limiter", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const shared = createSharedRateLimiter(await client(), keys, createRedisHealth("t", silentLogger()), {
      limit: 2,
      windowMs: 60_000,
    });
    const local = createFixedWindowLimiter({ limit: 2, windowMs: 60_000, now: Date.now });
    // Requests (true) and reloads (a number), as the rate-limit stage makes them: a spent route is
    // answered 429 by isSpent, without counting.
    const steps: Array<true | number> = [true, true, true, true, 3, true, true, 10, true, 1, true];
    const answers = async (limiter: typeof local | typeof shared) => {
      const seen: string[] = [];
      for (const step of steps) {
        if (step !== true) limiter.setLimit(step);
        else if (limiter.isSpent("hook")) seen.push("429");
        else seen.push((await limiter.tryAcquire("hook")) ? "ok" : "429");
      }
      return seen;
    };
    const expected = ["ok", "ok", "429", "429", "ok", "429", "ok", "429"];
    expect(await answers(local)).toEqual(expected);
    expect(await answers(shared)).toEqual(expected);
  });
});

describe("shared fixed-window rate limit, one turn's requests together", () => {
  /** The script calls Redis ran (EVALSHA and EVAL), from its own statistics. */
  const scriptCalls = async (redis: Redis) => {
    const stats = await redis.info("commandstats");
    return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };

  it("counts a turn's requests with one call to Redis per route, the first ones fitting in the order they came", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const redis = await client();
    const limiter = createSharedRateLimiter(redis, keys, createRedisHealth("t", silentLogger()), {
      limit: 25,
      windowMs: 60_000,
    });
    // An earlier turn loads the script, so the count below is the turn's calls alone.
    expect(await limiter.tryAcquire("warm")).toBe(true);
    const before = await scriptCalls(redis);
    const a = Array.from({ length: 30 }, () => limiter.tryAcquire("a"));
    const b = Array.from({ length: 10 }, () => limiter.tryAcquire("b"));
    const answersA = await Promise.all(a);
    expect(answersA).toEqual([...Array<boolean>(25).fill(true), ...Array<boolean>(5).fill(false)]);
    expect(await Promise.all(b)).toEqual(Array<boolean>(10).fill(true));
    // Two calls for the turn (one per route), and the one INFO above adds none to these statistics.
    expect((await scriptCalls(redis)) - before).toBe(2);
    expect(Number(await redis.get(keys.rate("a")))).toBe(25);
    expect(limiter.isSpent("a")).toBe(true);
    expect(limiter.isSpent("b")).toBe(false);
  });

  it("a turn of requests over a window another instance has partly spent gets exactly what is left", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const health = createRedisHealth("t", silentLogger());
    const one = createSharedRateLimiter(await client(), keys, health, { limit: 10, windowMs: 60_000 });
    const two = createSharedRateLimiter(await client(), keys, health, { limit: 10, windowMs: 60_000 });
    expect(await Promise.all(Array.from({ length: 7 }, () => one.tryAcquire("hook")))).toEqual(
      Array<boolean>(7).fill(true),
    );
    const answers = await Promise.all(Array.from({ length: 6 }, () => two.tryAcquire("hook")));
    expect(answers).toEqual([true, true, true, false, false, false]);
    expect(two.isSpent("hook")).toBe(true);
  });

  it("a counter Redis holds without an expiry gets the window's, and counts on", async () => {
    const keys = redisKeys(`t${randomUUID()}`);
    const redis = await client();
    await redis.set(keys.rate("hook"), "4");
    const limiter = createSharedRateLimiter(redis, keys, createRedisHealth("t", silentLogger()), {
      limit: 5,
      windowMs: 60_000,
    });
    expect(await Promise.all([limiter.tryAcquire("hook"), limiter.tryAcquire("hook")])).toEqual([
      true,
      false,
    ]);
    const ttl = await redis.pttl(keys.rate("hook"));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("every request of a turn Redis could not count is refused with StateUnavailableError (503)", async () => {
    const own = await startTestRedis();
    try {
      const redis = await connectRedis(own.url, "config.yaml", commandOptions());
      clients.push(redis);
      const health = createRedisHealth("redis://127.0.0.1/0", silentLogger());
      health.watch("commands", redis);
      const limiter = createSharedRateLimiter(redis, redisKeys("down"), health, {
        limit: 10,
        windowMs: 60_000,
      });
      expect(await limiter.tryAcquire("hook")).toBe(true);
      await own.stop();
      const answers = await Promise.allSettled(Array.from({ length: 3 }, () => limiter.tryAcquire("hook")));
      for (const answer of answers) {
        expect(answer.status).toBe("rejected");
        expect((answer as PromiseRejectedResult).reason).toBeInstanceOf(StateUnavailableError);
      }
    } finally {
      await own.cleanup();
    }
  });
});

describe("Redis unreachable", () => {
  it("rejects with StateUnavailableError, logs the outage once, and recovers when Redis is back", async () => {
    const own = await startTestRedis();
    try {
      const log = captureLogger();
      const health = createRedisHealth("redis://127.0.0.1/0", log.logger);
      const redis = await connectRedis(own.url, "config.yaml", commandOptions());
      clients.push(redis);
      health.watch("commands", redis);
      const seen = createSharedIdempotency(redis, redisKeys("down"), health);
      expect(await seen.checkAndAdd("r:1")).toBe(false);
      await own.stop();
      for (let i = 0; i < 5; i++)
        await expect(seen.checkAndAdd(`r:${i + 2}`)).rejects.toBeInstanceOf(StateUnavailableError);
      expect(log.messages().filter((m) => m.includes("unreachable"))).toHaveLength(1);
      expect(log.messages()[0]).toMatch(/unreachable.*503/);
      await own.start();
      await expect
        .poll(() => seen.checkAndAdd("r:after").catch(() => "down"), { timeout: 10_000 })
        .toBe(false);
      expect(log.messages().at(-1)).toMatch(/reachable again/);
    } finally {
      await own.cleanup();
    }
  });

  it("a password changed on the server while the gateway runs is named as refused credentials with the fix, once, not only as an outage that ends by itself", async () => {
    const own = await startTestRedis();
    try {
      const admin = await connectRedis(own.url, "config.yaml", commandOptions());
      await admin.config("SET", "requirepass", "first-pw-8c1d");
      const url = own.url.replace("redis://", "redis://:first-pw-8c1d@");
      const log = captureLogger();
      const health = createRedisHealth("redis://127.0.0.1/0", log.logger);
      const redis = await connectRedis(url, "config.yaml", commandOptions());
      clients.push(redis);
      health.watch("commands", redis);
      // The password is rotated on the server and the gateway's connection dropped: it cannot get back in.
      await admin.config("SET", "requirepass", "second-pw-4e9b");
      await admin.call("CLIENT", "KILL", "TYPE", "normal").catch(() => {});
      admin.disconnect();
      await expect
        .poll(() => log.messages().filter((m) => m.includes("refused the credentials")), { timeout: 10_000 })
        .toHaveLength(1);
      const line = log.messages().find((m) => m.includes("refused the credentials")) ?? "";
      expect(line).toMatch(/WRONGPASS/);
      expect(line).toContain("fix the user and password in state.redis_url");
      expect(line).not.toContain("first-pw-8c1d");
      // Reconnects keep being refused: said once per outage.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(log.messages().filter((m) => m.includes("refused the credentials"))).toHaveLength(1);
      redis.disconnect();
    } finally {
      await own.cleanup();
    }
  });

  it("a SET that got no answer in time but ran late (a frozen Redis) is removed: the sender's retry after the 503 is processed, not a duplicate", async () => {
    const own = await startTestRedis();
    try {
      // 1 s, not 150 ms: the connect and the first SET, to a Redis that is not frozen yet, must be answered
      // within it, and on a loaded machine another process may wait longer than that for the CPU.
      const redis = await connectRedis(own.url, "config.yaml", { ...commandOptions(), commandTimeout: 1000 });
      clients.push(redis);
      const keys = redisKeys("frozen");
      const seen = createSharedIdempotency(redis, keys, createRedisHealth("t", silentLogger()));
      // Only the record that went unanswered is removed.
      expect(await seen.checkAndAdd("r:other")).toBe(false);
      own.freeze();
      await expect(seen.checkAndAdd("r:1")).rejects.toBeInstanceOf(StateUnavailableError);
      own.thaw();
      // The SET waited in the frozen server's socket and ran once it went on; what follows it removes it.
      const raw = await connectRedis(own.url, "config.yaml", commandOptions());
      clients.push(raw);
      await expect.poll(() => raw.exists(keys.seen("r:1")), { timeout: 2000, interval: 10 }).toBe(0);
      expect(await seen.checkAndAdd("r:1")).toBe(false);
      await seen.keep("r:1");
      expect(await seen.checkAndAdd("r:1")).toBe(true);
      expect(await raw.exists(keys.seen("r:other"))).toBe(1);
    } finally {
      own.thaw();
      await own.cleanup();
    }
  });

  it("a redis_url whose credentials the server refuses says to fix them, not to start Redis", async () => {
    const url = server.url.replace("redis://", "redis://nobody:wrong-pw@");
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions());
    await expect(refused).rejects.toThrow(
      /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 refused the credentials \(WRONGPASS .*\) — fix the user and password in state\.redis_url/,
    );
    await expect(refused).rejects.not.toThrow(/wrong-pw|start Redis/);
  });

  it("a redis_url without the password Redis asks for says that it gives none", async () => {
    const own = await startTestRedis();
    try {
      const admin = await connectRedis(own.url, "config.yaml", commandOptions());
      await admin.config("SET", "requirepass", "asked-pw-5f2a");
      admin.disconnect();
      await expect(connectRedis(own.url, "/home/x/config.yaml", commandOptions())).rejects.toThrow(
        /state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 asks for a password, and state\.redis_url gives none \(NOAUTH .*\) — write it in state\.redis_url \(redis:\/\/:password@host:6379\/0/,
      );
    } finally {
      await own.cleanup();
    }
  });

  it("a user whose ACL leaves out the key prefix refuses the start naming the prefix and the fix, not 503 to every request", async () => {
    const admin = await client();
    const user = `u${randomUUID().slice(0, 8)}`;
    await admin.call("ACL", "SETUSER", user, "on", ">pw", "~allowed:*", "+@all");
    const url = server.url.replace("redis://", `redis://${user}:pw@`);
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions(), "other");
    await expect(refused).rejects.toThrow(
      /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 does not let the user of state\.redis_url use the keys under "other:" \(NOPERM .*\) — let that user read and write the keys under "other:" with every command \(ACL SETUSER <user> ~other:\* &other:session-mirrors \+@all\), or set state\.redis_key_prefix to a prefix it may use$/,
    );
    await expect(refused).rejects.not.toThrow(/:pw@/);
    const allowed = await connectRedis(url, "/home/x/config.yaml", commandOptions(), "allowed");
    allowed.disconnect();
    // Every key, and no scripts: BullMQ's Lua scripts would be refused at every request.
    await admin.call("ACL", "SETUSER", user, "~*", "-@scripting");
    await expect(connectRedis(url, "/home/x/config.yaml", commandOptions(), "allowed")).rejects.toThrow(
      /state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 does not let the user of state\.redis_url run Lua scripts, which svc's run queue \(BullMQ\) needs \(NOPERM .*eval.*\) — let that user read and write the keys under "allowed:" with every command \(ACL SETUSER <user> ~allowed:\* &allowed:session-mirrors \+@all\)$/,
    );
  });

  it("a user whose ACL leaves out INFO (+@all -@dangerous) refuses the start: BullMQ's worker would spin on it and the gateway answer nothing", async () => {
    const admin = await client();
    const user = `u${randomUUID().slice(0, 8)}`;
    await admin.call("ACL", "SETUSER", user, "on", ">info-pw-5d2e", "~allowed:*", "+@all", "-@dangerous");
    const url = server.url.replace("redis://", `redis://${user}:info-pw-5d2e@`);
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions(), "allowed");
    await expect(refused).rejects.toThrow(
      /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 does not let the user of state\.redis_url run INFO, which svc's run queue \(BullMQ\) needs to start \(NOPERM .*info.*\) — let that user run INFO \(ACL SETUSER <user> \+info; an ACL of \+@all -@dangerous leaves it out\)$/,
    );
    await expect(refused).rejects.not.toThrow(/info-pw-5d2e/);
    await admin.call("ACL", "SETUSER", user, "+info");
    const allowed = await connectRedis(url, "/home/x/config.yaml", commandOptions(), "allowed");
    allowed.disconnect();
  });

  it("a Redis whose redis.conf renames INFO away is named so, not as one to start", async () => {
    const own = await startTestRedis({ args: ["--rename-command", "INFO", ""] });
    try {
      await expect(connectRedis(own.url, "/home/x/config.yaml", commandOptions(), "svc")).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 does not run INFO \(ERR unknown command 'info'.*\) — svc's Redis client and run queue \(BullMQ\) read the server's state and version with it: take INFO out of the rename-command lines of its redis\.conf$/,
      );
    } finally {
      await own.cleanup();
    }
  });

  it("a Redis in cluster mode refuses the start naming it: its CROSSSLOT refusals would have every request answered 503", async () => {
    const own = await startTestRedis({ args: ["--cluster-enabled", "yes"] });
    try {
      // One node holding every slot: a working cluster, whose keys all live on the server svc connects to.
      const admin = await connectRedis(own.url, "config.yaml", commandOptions());
      await admin.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      admin.disconnect();
      await expect(connectRedis(own.url, "/home/x/config.yaml", commandOptions(), "svc")).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 runs in cluster mode \(cluster_enabled:1\): svc's run queue \(BullMQ\) and its own scripts use several keys at once, which a Redis Cluster refuses across hash slots \(CROSSSLOT\), so every request would be answered 503 — point state\.redis_url at a Redis with cluster mode off \(cluster-enabled no in its redis\.conf; with a managed Redis, its non-cluster mode\): every instance shares that one server$/,
      );
    } finally {
      await own.cleanup();
    }
  });

  it("a read-only replica refuses the start naming its primary: its READONLY refusals would have every request answered 503", async () => {
    const own = await startTestRedis({ args: ["--replicaof", "127.0.0.1", String(server.port)] });
    try {
      const refused = connectRedis(own.url, "/home/x/config.yaml", commandOptions(), "svc");
      await expect(refused).rejects.toThrow(
        new RegExp(
          `^/home/x/config\\.yaml: state\\.redis_url: redis://127\\.0\\.0\\.1:\\d+/0 is a replica of 127\\.0\\.0\\.1:${server.port} \\(role:slave\\), which refuses or does not share svc's writes, so every request would be answered 503 — point state\\.redis_url at the primary \\(127\\.0\\.0\\.1:${server.port}\\), the server every instance writes to$`,
        ),
      );
    } finally {
      await own.cleanup();
    }
  });

  it("a Redis that takes the connection and never answers (frozen) is named so, not as one to start", async () => {
    const own = await startTestRedis();
    try {
      own.freeze();
      // The command timeout is the settings' own (a frozen Redis answers no command whatever its length):
      // 300 ms instead of the gateway's 2 s, each command the connect sends waiting it out.
      const refused = connectRedis(own.url, "/home/x/config.yaml", {
        ...commandOptions(),
        commandTimeout: 300,
      });
      await expect(refused).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 took the connection but did not answer in time \(Command timed out\) — a frozen \(SIGSTOP\), paused \(CLIENT PAUSE\) or overloaded Redis, or another service on that port: check that server, or fix state\.redis_url$/,
      );
    } finally {
      own.thaw();
      await own.cleanup();
    }
  });

  it("a Redis at its maxclients (it closes each new connection) is named so, with the fix, not as one to start", async () => {
    const own = await startTestRedis({ args: ["--maxclients", "1"] });
    const holder = await connectRedis(own.url, "config.yaml", commandOptions());
    try {
      const refused = connectRedis(own.url, "/home/x/config.yaml", commandOptions());
      await expect(refused).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 refuses new clients: it has as many as its maxclients allows \(ERR max number of clients reached\) — /,
      );
      await expect(refused).rejects.toThrow(
        "close the clients that hold its connections (CLIENT LIST shows them) or raise maxclients in its redis.conf (CONFIG SET maxclients for the running server); each gateway instance holds about 8",
      );
      await expect(refused).rejects.not.toThrow(/start Redis/);
    } finally {
      holder.disconnect();
      await own.cleanup();
    }
  });

  it("refuses to start on a redis_url nothing answers, naming the file, the key and the fix", async () => {
    const own = await startTestRedis();
    const url = own.url;
    await own.cleanup();
    await expect(connectRedis(url, "/home/x/config.yaml", commandOptions())).rejects.toThrow(
      /^\/home\/x\/config\.yaml: state\.redis_url: cannot reach redis:\/\/127\.0\.0\.1:\d+\/0 .* — start Redis at .*, or fix state\.redis_url/,
    );
  });

  it("leaves no timer behind once it refused a redis_url nothing answers: the command's process exits at once", async () => {
    const own = await startTestRedis();
    const url = own.url;
    await own.cleanup();
    // Closing a connection that never opened again armed ioredis's 2 s disconnect timer, which held every
    // `svc webhook …` command (and a refused start) for 2 s after its error was printed.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      await expect(connectRedis(url, "/home/x/config.yaml", commandOptions())).rejects.toThrow(
        /cannot reach/,
      );
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

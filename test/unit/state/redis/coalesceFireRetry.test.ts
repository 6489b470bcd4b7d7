import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/io/log.js";
import {
  createSharedCoalescing,
  ORPHAN_GRACE_MS,
  type SharedCoalescing,
} from "../../../../src/io/state/redis/coalescing.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
} from "../../../../src/io/state/redis/connection.js";
import {
  createSharedIdempotency,
  PENDING_TTL_SECONDS,
  SEEN_TTL_SECONDS,
} from "../../../../src/io/state/redis/idempotency.js";
import { type RedisKeys, redisKeys } from "../../../../src/io/state/redis/keys.js";
import type { AcceptedEvent } from "../../../../src/streams/context.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { groupedEvent, groupedRoute, sharedRunOf as shared } from "../../../helpers/groupedEvent.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";

let server: TestRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startTestRedis();
  redis = await connectRedis(server.url, "config.yaml", commandOptions());
});
afterAll(async () => {
  redis.disconnect();
  await server.cleanup();
});

// A quiet window the events a test offers one after another fall well within: one arriving after it opens
// a new group.
const ROUTE = groupedRoute(0.3, 60);
const event = (deliveryId: string): AcceptedEvent => groupedEvent(ROUTE, deliveryId);

/** Redis's clock, in ms: the one the groups' windows are measured on. */
async function redisMs(): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits until Redis's clock has passed `at`. */
async function redisClockPast(at: number): Promise<void> {
  while ((await redisMs()) <= at) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A run a test's coalescing dispatched: its event, how many it superseded, why its group fired. */
interface Dispatched {
  id: string;
  superseded: number;
  reason: string | undefined;
}

/**
 * A shared coalescing (on its own keys unless `keys` are given) whose dispatch records what fired, refusing
 * the first `refuse` fires; `sweep` quickens the sweep of due groups.
 */
function recording(
  options: { refuse?: number; keys?: RedisKeys; sweep?: { everyMs: number; graceMs: number } } = {},
) {
  const dispatched: Dispatched[] = [];
  let refusals = options.refuse ?? 0;
  const coalescing = createSharedCoalescing({
    url: server.url,
    redis,
    keys: options.keys ?? redisKeys(`c${randomUUID()}`),
    health: createRedisHealth("test", silentLogger()),
    logger: silentLogger(),
    fireRetry: { attempts: 3, backoffMs: 20 },
    ...(options.sweep === undefined ? {} : { sweep: options.sweep }),
    async dispatch(run, superseded, _generation, reason) {
      if (refusals > 0) {
        refusals -= 1;
        throw new Error("Redis unreachable: Connection is closed.");
      }
      dispatched.push({ id: run.deliveryId, superseded, reason });
    },
  });
  return { coalescing, dispatched };
}

/** A shared coalescing that dispatches nothing, its timer queue on `url` (the test's Redis unless told). */
function idle(keys: RedisKeys, url = server.url, health = createRedisHealth("test", silentLogger())) {
  return createSharedCoalescing({ url, redis, keys, health, logger: silentLogger(), async dispatch() {} });
}

/**
 * Runs `offer` on a coalescing whose joins reach Redis but whose timer jobs are never stored: its queue's
 * connection is to a redis-server that refuses the queue's scripts (the state a kill right after a join
 * leaves).
 */
async function offeredWithoutTimers(
  keys: RedisKeys,
  offer: (cut: SharedCoalescing) => Promise<void>,
): Promise<void> {
  const refusing = await startTestRedis({
    args: ["--rename-command", "EVALSHA", "", "--rename-command", "EVAL", ""],
  });
  const cut = idle(keys, refusing.url);
  try {
    await offer(cut);
  } finally {
    await cut.close(0);
    await refusing.cleanup();
  }
}

/**
 * Another instance, sweeping `keys` every 20 ms, until `fired` holds of what it dispatched and nothing is
 * due any more; returns what it dispatched, once it is closed.
 */
async function sweptByAnotherInstance(
  keys: RedisKeys,
  fired: (dispatched: readonly Dispatched[]) => void,
): Promise<readonly Dispatched[]> {
  const { coalescing: other, dispatched } = recording({ keys, sweep: { everyMs: 20, graceMs: 0 } });
  try {
    other.start();
    await vi.waitFor(() => fired(dispatched), { timeout: 5000, interval: 10 });
    await vi.waitFor(async () => expect(await redis.zcard(keys.coalesceDue())).toBe(0), {
      timeout: 5000,
      interval: 10,
    });
  } finally {
    await other.close(0);
  }
  return dispatched;
}

describe("shared coalescing groups (Redis)", () => {
  it("a group whose quiet window closes first fires with reason quiet_window", async () => {
    const { coalescing, dispatched } = recording();
    try {
      for (const id of ["quiet-a", "quiet-b"])
        expect(await coalescing.offer(event(id), shared(event(id)))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(
        () => expect(dispatched).toEqual([{ id: "quiet-b", superseded: 1, reason: "quiet_window" }]),
        { timeout: 5000, interval: 10 },
      );
    } finally {
      await coalescing.close(0);
    }
  });

  it("a group whose max wait ends before its quiet window fires with reason max_wait, and a fire tried again after its run could not be stored reports the same reason", async () => {
    // Max wait 300 ms, quiet window 3 s: the group is due at its max wait, whenever its timer asks.
    const capped = groupedRoute(3, 0.3);
    const { coalescing, dispatched } = recording({ refuse: 1 });
    try {
      for (const id of ["capped-a", "capped-b"]) {
        const e = groupedEvent(capped, id);
        expect(await coalescing.offer(e, shared(e))).toBe("coalesced");
      }
      coalescing.start();
      await vi.waitFor(
        () => expect(dispatched).toEqual([{ id: "capped-b", superseded: 1, reason: "max_wait" }]),
        { timeout: 5000, interval: 10 },
      );
    } finally {
      await coalescing.close(0);
    }
  });

  it("an event that comes after its group fell due, before the group's timer took it (Redis away meanwhile), opens a new group: the due group runs alone, once, with the bound it reached, as in memory", async () => {
    for (const [window, maxWait, reason] of [
      [0.1, 60, "quiet_window"],
      [60, 0.1, "max_wait"],
    ] as const) {
      const route = groupedRoute(window, maxWait);
      const keys = redisKeys(`c${randomUUID()}`);
      // No worker runs until both events are in: the first group's timer is late.
      const { coalescing, dispatched } = recording({ keys });
      try {
        const first = groupedEvent(route, `due-${reason}-a`);
        expect(await coalescing.offer(first, shared(first))).toBe("coalesced");
        await redisClockPast((await redisMs()) + 150);
        const late = groupedEvent(route, `due-${reason}-b`);
        expect(await coalescing.offer(late, shared(late))).toBe("coalesced");
        coalescing.start();
        // Two runs (their timers run side by side: in either order), each of one event.
        await vi.waitFor(
          () =>
            expect([...dispatched].sort((x, y) => x.id.localeCompare(y.id))).toEqual([
              { id: `due-${reason}-a`, superseded: 0, reason },
              { id: `due-${reason}-b`, superseded: 0, reason },
            ]),
          { timeout: 5000, interval: 10 },
        );
        // Each fired once and is no longer due: no sweep finds either again.
        await vi.waitFor(async () => expect(await redis.zcard(keys.coalesceDue())).toBe(0), {
          timeout: 5000,
          interval: 10,
        });
      } finally {
        await coalescing.close(0);
      }
    }
  });

  it("a group an event found due, whose timer job was never stored, is fired by another instance's sweep, once", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const route = groupedRoute(0.1, 60);
    const first = groupedEvent(route, "handed-a");
    // Both joins reach Redis; neither timer job is stored.
    await offeredWithoutTimers(keys, async (cut) => {
      expect(await cut.offer(first, shared(first))).toBe("coalesced");
      await redisClockPast((await redisMs()) + 150);
      // Received once the group was due (an event received before the run it hands on is superseded by it).
      const late = groupedEvent(route, "handed-b");
      expect(await cut.offer(late, shared(late))).toBe("coalesced");
    });
    const dispatched = await sweptByAnotherInstance(keys, (fired) =>
      expect(fired.map((d) => [d.id, d.superseded]).sort()).toEqual([
        ["handed-a", 0],
        ["handed-b", 0],
      ]),
    );
    expect(dispatched).toHaveLength(2);
  });

  it("a group whose max wait is shorter than its quiet window fires at its max wait, not once the window has passed", async () => {
    // Quiet window 60 s, max wait 50 ms: the group is due 50 ms after its event, as in memory.
    const capped = groupedRoute(60, 0.05);
    const { coalescing, dispatched } = recording();
    try {
      const e = groupedEvent(capped, "short-max");
      expect(await coalescing.offer(e, shared(e))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(
        () => expect(dispatched).toEqual([{ id: "short-max", superseded: 0, reason: "max_wait" }]),
        { timeout: 5000, interval: 10 },
      );
    } finally {
      await coalescing.close(0);
    }
  });

  it("a fire whose run could not be stored (Redis gone between taking the group and enqueueing its run) is tried again, not dropped with its 202'd events", async () => {
    const dispatched: Array<{ id: string; superseded: number }> = [];
    let refuse = 1;
    const coalescing = createSharedCoalescing({
      url: server.url,
      redis,
      keys: redisKeys(`c${randomUUID()}`),
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      fireRetry: { attempts: 3, backoffMs: 20 },
      async dispatch(run, superseded) {
        if (refuse > 0) {
          refuse -= 1;
          throw new Error("Redis unreachable: Connection is closed.");
        }
        dispatched.push({ id: run.deliveryId, superseded });
      },
    });
    try {
      for (const id of ["a", "b"])
        expect(await coalescing.offer(event(id), shared(event(id)))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(() => expect(dispatched).toEqual([{ id: "b", superseded: 1 }]), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      await coalescing.close(0);
    }
  });

  it("a group's key expires its max wait plus the grace after it opened, so a group whose timer job was never stored (every offer answered 503) does not stay for ever; a later event does not push the expiry on", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const coalescing = idle(keys);
    try {
      const first = event("orphan-a");
      expect(await coalescing.offer(first, shared(first))).toBe("coalesced");
      const group = keys.coalesceGroup("grp:1");
      const opened = await redis.pttl(group);
      expect(opened).toBeGreaterThan(ORPHAN_GRACE_MS);
      expect(opened).toBeLessThanOrEqual(60_000 + ORPHAN_GRACE_MS);
      const second = event("orphan-b");
      expect(await coalescing.offer(second, shared(second))).toBe("coalesced");
      expect(await redis.pttl(group)).toBeLessThanOrEqual(opened);
    } finally {
      await coalescing.close(0);
    }
  });

  it("joining a group keeps the event's delivery id for its hour in the same step: an instance killed right after the join (before the 202's own follow-up) leaves no id that expires after its pending minute, whose retry would join again", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    const coalescing = idle(keys);
    try {
      for (const id of ["kept-a", "kept-b"]) {
        // As the idempotency step records it before the event joins: pending, for a minute.
        await redis.set(keys.seen(`grp:${id}`), "token", "EX", PENDING_TTL_SECONDS, "NX");
        expect(await coalescing.offer(event(id), shared(event(id)))).toBe("coalesced");
        // No keep() here: the join alone gave the id its hour (the first opens the group, the second joins it).
        expect(await redis.pttl(keys.seen(`grp:${id}`))).toBeGreaterThan(PENDING_TTL_SECONDS * 1000);
        expect(await redis.pttl(keys.seen(`grp:${id}`))).toBeLessThanOrEqual(SEEN_TTL_SECONDS * 1000);
      }
      // A duplicate in the last minute of a joined id's hour (no job stored under it) is the duplicate it
      // is, not refused as a record whose event was never stored.
      await redis.expire(keys.seen("grp:kept-a"), 30);
      const seen = createSharedIdempotency(
        redis,
        keys,
        createRedisHealth("test", silentLogger()),
        undefined,
        undefined,
        { pollMs: 5, waitMs: 1000, pendingWaitMs: 20 },
        async () => false,
      );
      expect(await seen.checkAndAdd("grp:kept-a")).toBe(true);
      // An id that is not recorded (forgotten meanwhile) is not made by the join.
      expect(await coalescing.offer(event("never-seen"), shared(event("never-seen")))).toBe("coalesced");
      expect(await redis.exists(keys.seen("grp:never-seen"))).toBe(0);
    } finally {
      await coalescing.close(0);
    }
  });

  it("a group whose timer job was never stored (its instance killed, or its queue unreachable, right after the event joined) is fired by another instance's sweep at its due time, not left until another event for its key", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    // The join reaches Redis; the timer job's queue (its own connection) stores nothing: the state a kill
    // between the two leaves.
    await offeredWithoutTimers(keys, async (cut) => {
      // Joined, so kept (answered 202), though its timer was not stored.
      expect(await cut.offer(event("cut-a"), shared(event("cut-a")))).toBe("coalesced");
      expect(await redis.exists(keys.coalesceGroup("grp:1"))).toBe(1);
    });
    // A group long gone (expired after 30 days of every instance down) leaves its due entry behind: swept too.
    await redis.zadd(keys.coalesceDue(), 0, "999999:grp:gone");
    const dispatched = await sweptByAnotherInstance(keys, (fired) =>
      expect(fired.map((d) => d.id)).toEqual(["cut-a"]),
    );
    // Fired once, and no longer due, as the gone one: later sweeps find nothing to fire.
    expect(dispatched.map((d) => d.id)).toEqual(["cut-a"]);
  });

  it("an event that joined its group when Redis refused to store the group's timer (full by the join, say: OOM) is kept and answered 202, not 503: the sweep fires its group with it, once, and the sender's retry is a duplicate", async () => {
    const keys = redisKeys(`c${randomUUID()}`);
    // The timer's queue connects as a user Redis refuses scripts to (NOPERM), as a Redis the join filled
    // refuses the timer's script (OOM): the join's own script, on the command connection, is taken.
    await redis.call("ACL", "SETUSER", "notimer", "on", ">pw", "~*", "&*", "+@all", "-evalsha", "-eval");
    const log = captureLogger();
    const cut = idle(
      keys,
      server.url.replace("redis://", "redis://notimer:pw@"),
      createRedisHealth("test", log.logger),
    );
    try {
      // As the idempotency step records it before the event joins: pending, for a minute.
      await redis.set(keys.seen("grp:kept-oom"), "token", "EX", PENDING_TTL_SECONDS, "NX");
      expect(await cut.offer(event("kept-oom"), shared(event("kept-oom")))).toBe("coalesced");
      // The refusal is logged as any is, with its fix.
      expect(log.messages().filter((m) => m.includes("refused a command (NOPERM"))).toHaveLength(1);
    } finally {
      await cut.close(0);
      await redis.call("ACL", "DELUSER", "notimer");
    }
    const dispatched = await sweptByAnotherInstance(keys, (fired) =>
      expect(fired.map((d) => d.id)).toEqual(["kept-oom"]),
    );
    expect(dispatched).toHaveLength(1);
    // The sender got its 202: a retry all the same is the duplicate it is.
    const seen = createSharedIdempotency(
      redis,
      keys,
      createRedisHealth("test", silentLogger()),
      undefined,
      undefined,
      { pollMs: 5, waitMs: 1000, pendingWaitMs: 20 },
      async () => false,
    );
    expect(await seen.checkAndAdd("grp:kept-oom")).toBe(true);
  });

  it("a group whose timer was stored before this instance's clock was set back (NTP) fires at its due time on Redis's clock, not once the instance's clock has come round to it", async () => {
    const { coalescing, dispatched } = recording({ sweep: { everyMs: 20, graceMs: 0 } });
    // Only Date is faked (BullMQ times its delayed jobs on this process's Date.now): timers stay real.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const e = event("set-back");
      expect(await coalescing.offer(e, shared(e))).toBe("coalesced");
      vi.setSystemTime(Date.now() - 3_600_000);
      coalescing.start();
      await vi.waitFor(() => expect(dispatched.map((d) => d.id)).toEqual(["set-back"]), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      vi.useRealTimers();
      await coalescing.close(0);
    }
  });

  it("the latest event is the one received last on Redis's clock: an instance whose clock is ahead does not keep a newer event from replacing its own; one received earlier on the same clock (a slow script) still does not replace a newer one", async () => {
    const { coalescing, dispatched } = recording();
    const received = (id: string, at: number) => groupedEvent(ROUTE, id, at);
    try {
      // Instance A's clock runs 5 s ahead: its event is stamped 5 s "later" than B's, received after it.
      const a = received("a", Date.now() + 5000);
      expect(await coalescing.offer(a, shared(a))).toBe("coalesced");
      // b arrives a few ms later on Redis's clock (a few TIME round trips, no timer).
      const after = (await redisMs()) + 3;
      while ((await redisMs()) < after);
      const b = received("b", Date.now());
      expect(await coalescing.offer(b, shared(b))).toBe("coalesced");
      // Received 1 s before b on b's clock, offered after it: superseded, not the latest.
      const slow = received("slow", Date.now() - 1000);
      expect(await coalescing.offer(slow, shared(slow))).toBe("coalesced");
      coalescing.start();
      await vi.waitFor(() => expect(dispatched.map((d) => d.id)).toEqual(["b"]), {
        timeout: 5000,
        interval: 10,
      });
    } finally {
      await coalescing.close(0);
    }
  });
});

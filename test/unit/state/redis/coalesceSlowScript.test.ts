import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Route } from "../../../../src/config/sections/webhook.js";
import { silentLogger } from "../../../../src/io/log.js";
import { createSharedCoalescing, type SharedCoalescing } from "../../../../src/io/state/redis/coalescing.js";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { type RedisKeys, redisKeys } from "../../../../src/io/state/redis/keys.js";
import { LAST_DISPATCHED_MS } from "../../../../src/machines/coalesceGroup.js";
import type { AcceptedEvent } from "../../../../src/streams/context.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { groupedEvent, groupedRoute, sharedRunOf as shared } from "../../../helpers/groupedEvent.js";
import { redisPerFile } from "../../../helpers/redisPerFile.js";

/**
 * docs/coalescing-and-cron.md: an event that reached the coalescer after a newer event's group fired (a slower
 * script, a body that came slowly) was superseded by that run, with `state.backend: redis` as in memory: it
 * opens no group of its own (which would run it alone, after the newer one), and the key's next group counts it.
 */

const own = redisPerFile();

// A quiet window the test's offers of one group fall well within.
const SCRIPTED: Route = { ...groupedRoute(0.3, 60), script: "slow.sh" };

const opened: SharedCoalescing[] = [];
afterEach(async () => {
  for (const coalescing of opened.splice(0)) await coalescing.close(0);
});

/** A shared coalescing on its own keys that records what it dispatched, and its log. */
function recording(keys: RedisKeys, elapsed?: () => number) {
  const dispatched: Array<{ id: string; superseded: number }> = [];
  const log = captureLogger();
  const coalescing = createSharedCoalescing({
    url: own.server.url,
    redis: own.redis,
    keys,
    health: createRedisHealth("test", silentLogger()),
    logger: log.logger,
    async dispatch(run, superseded) {
      dispatched.push({ id: run.deliveryId, superseded });
    },
    ...(elapsed === undefined ? {} : { elapsed }),
  });
  opened.push(coalescing);
  const offer = (e: AcceptedEvent) => coalescing.offer(e, shared(e));
  return { coalescing, dispatched, log, offer };
}

const superseded = (log: ReturnType<typeof captureLogger>) =>
  log
    .lines()
    .map((line) => JSON.parse(line) as { msg: string; delivery_id?: string; superseded_by?: string })
    .filter((l) => l.msg.includes("superseded by a run already dispatched"))
    .map((l) => [l.delivery_id, l.superseded_by]);

describe("a shared group's event whose slower script let a newer event's group fire first", {
  timeout: 30_000,
}, () => {
  it("is answered coalesced and opens no group; the key's next group counts it superseded", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, log, offer } = recording(keys);
    const b = groupedEvent(SCRIPTED, "B");
    coalescing.start();
    expect(await offer(b)).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toEqual([{ id: "B", superseded: 0 }]), {
      timeout: 10_000,
      interval: 20,
    });
    // A was received before B, and is out of its script only now.
    expect(await offer(groupedEvent(SCRIPTED, "A", b.receivedAt - 300))).toEqual({ supersededBy: "B" });
    expect(await own.redis.exists(keys.coalesceGroup("grp:1"))).toBe(0);
    expect(superseded(log)).toEqual([["A", "B"]]);
    expect(await offer(groupedEvent(SCRIPTED, "C"))).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(dispatched).toEqual([
      { id: "B", superseded: 0 },
      { id: "C", superseded: 1 },
    ]);
  });

  it("also when its offer finds the newer event's group due and not yet taken by its timer (handed on to fire)", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, log, offer } = recording(keys);
    const b = groupedEvent(SCRIPTED, "B");
    // No timer runs yet: the group stays in Redis past its due time until an offer or the timer takes it.
    expect(await offer(b)).toBe("coalesced");
    const group = keys.coalesceGroup("grp:1");
    await vi.waitFor(
      async () => {
        const [first, quiet] = await own.redis.hmget(group, "first", "quiet");
        const [seconds, micros] = await own.redis.time();
        expect(Number(seconds) * 1000 + Number(micros) / 1000).toBeGreaterThan(Number(first) + Number(quiet));
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(await offer(groupedEvent(SCRIPTED, "A", b.receivedAt - 300))).toEqual({ supersededBy: "B" });
    expect(await own.redis.exists(group)).toBe(0);
    expect(superseded(log)).toEqual([["A", "B"]]);
    coalescing.start();
    await vi.waitFor(() => expect(dispatched).toEqual([{ id: "B", superseded: 0 }]), {
      timeout: 10_000,
      interval: 20,
    });
    expect(await offer(groupedEvent(SCRIPTED, "C"))).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(dispatched.at(-1)).toEqual({ id: "C", superseded: 1 });
  });

  it("a route without a script remembers too (an earlier event whose body came in slowly is superseded), and the key's memory lasts an hour, not the script timeout", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, log, offer } = recording(keys);
    const { script: _s, ...plain } = SCRIPTED;
    const b = groupedEvent(plain, "B");
    coalescing.start();
    expect(await offer(b)).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(1), { timeout: 10_000, interval: 20 });
    const ttl = await own.redis.pttl(keys.coalesceLast("grp:1"));
    // Given the hour when the group fired: more than half of it left tells it from a script timeout.
    expect(ttl).toBeGreaterThan(LAST_DISPATCHED_MS / 2);
    expect(ttl).toBeLessThanOrEqual(LAST_DISPATCHED_MS);
    expect(await offer(groupedEvent(plain, "A", b.receivedAt - 3_000))).toEqual({ supersededBy: "B" });
    expect(await own.redis.exists(keys.coalesceGroup("grp:1"))).toBe(0);
    expect(superseded(log)).toEqual([["A", "B"]]);
  });

  it("an event received once the group fired is not superseded by its run when Redis's clock was set back since the fire: it opens the key's next group", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, log, offer } = recording(keys);
    const { script: _s, ...plain } = SCRIPTED;
    coalescing.start();
    expect(await offer(groupedEvent(plain, "B"))).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(1), { timeout: 10_000, interval: 20 });
    // The key's memory as the fire wrote it with Redis's clock 10 minutes ahead of what it reads now (set back
    // since: a server restored from a snapshot, an NTP step): B's receive time and the fire's, both ahead.
    const last = keys.coalesceLast("grp:1");
    await own.redis.hincrby(last, "at", 600_000);
    await own.redis.hincrby(last, "fired", 600_000);
    // C was received now, after the fire: it was said superseded by B's run (and never ran) for the hour.
    expect(await offer(groupedEvent(plain, "C"))).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(dispatched.at(-1)).toEqual({ id: "C", superseded: 0 });
    expect(superseded(log)).toEqual([]);
    // With Redis's clock right, an event received before the run's event is still superseded by it.
    expect(await offer(groupedEvent(plain, "A", Date.now() - 60_000))).toEqual({ supersededBy: "C" });
  });

  it("a pending group whose latest was offered with Redis's clock ahead of what it reads now (set back since) takes an event joining it for the newer one", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, offer } = recording(keys, () => performance.now());
    // A window C's offer is sure to come within, however loaded the machine (0.3 s let B's group fire first).
    const plain = groupedRoute(3, 60);
    coalescing.start();
    expect(await offer({ ...groupedEvent(plain, "B"), receivedTick: performance.now() })).toBe("coalesced");
    // The group as B's offer wrote it with Redis's clock 10 minutes ahead: B's receive time, the group's
    // opening and when B was offered, all ahead of what Redis's clock reads now.
    const group = keys.coalesceGroup("grp:1");
    await own.redis.hincrbyfloat(group, "latestAt", 600_000);
    await own.redis.hincrby(group, "first", 600_000);
    await own.redis.hincrby(group, "offeredAt", 600_000);
    // C, received now, joins the group: its receive time on Redis's clock is before B's, yet it is the newer.
    expect(await offer({ ...groupedEvent(plain, "C"), receivedTick: performance.now() })).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(1), { timeout: 10_000, interval: 20 });
    expect(dispatched).toEqual([{ id: "C", superseded: 1 }]);
  });

  it("receive times on Redis's clock are whole milliseconds, as in memory: the fraction of one the instance's clock reads is not compared", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    // The clock that is never set reads 0.4 ms since each event was received.
    const { coalescing, dispatched, offer } = recording(keys, () => 5_000.6);
    const { script: _s, ...plain } = SCRIPTED;
    expect(await offer({ ...groupedEvent(plain, "B"), receivedTick: 5_000.2 })).toBe("coalesced");
    const latestAt = await own.redis.hget(keys.coalesceGroup("grp:1"), "latestAt");
    expect(latestAt).toMatch(/^\d+$/);
    coalescing.start();
    await vi.waitFor(() => expect(dispatched).toHaveLength(1), { timeout: 10_000, interval: 20 });
    // The key's memory keeps that whole millisecond.
    expect(await own.redis.hget(keys.coalesceLast("grp:1"), "at")).toBe(latestAt);
  });

  it("how long ago an event was received is read on the clock that is never set: a step forward of the instance's clock while it was in the pipeline does not make it superseded by a group that fired before it", async () => {
    const keys = redisKeys(`ss${randomUUID()}`);
    const { coalescing, dispatched, log, offer } = recording(keys, () => performance.now());
    const { script: _s, ...plain } = SCRIPTED;
    coalescing.start();
    expect(await offer({ ...groupedEvent(plain, "B"), receivedTick: performance.now() })).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(1), { timeout: 10_000, interval: 20 });
    // C was received just now; the system clock stepped 10 minutes forward since, before its receive time was
    // read: its receivedAt is 10 minutes before the clock's now (and before B's).
    const c = { ...groupedEvent(plain, "C", Date.now() - 600_000), receivedTick: performance.now() };
    expect(await offer(c)).toBe("coalesced");
    await vi.waitFor(() => expect(dispatched).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(dispatched.at(-1)).toEqual({ id: "C", superseded: 0 });
    expect(superseded(log)).toEqual([]);
  });
});

import { DelayedError } from "bullmq";
import type { Redis } from "ioredis";
import {
  type CoalesceGroupOutput,
  LAST_DISPATCHED_MS,
  renderCoalesceKey,
  timerDelay,
} from "../../../machines/coalesceGroup.js";
import type { AcceptedEvent, Coalesced } from "../../../streams/context.js";
import { seenKey } from "../../../streams/stages/idempotency.js";
import { StateUnavailableError } from "../../../streams/stateUnavailable.js";
import type { Logger } from "../../log.js";
import { coalesceGroupId } from "./coalesceGroupId.js";
import type { RedisHealth } from "./connection.js";
import { JOINED, SEEN_TTL_SECONDS } from "./idempotency.js";
import type { RedisKeys } from "./keys.js";
import { createSharedQueue, type SharedQueue, type StallSettings } from "./sharedQueue.js";
import type { SharedRun } from "./sharedRun.js";

/**
 * A fired group's memory (see `OFFER_SCRIPT`): `keepLast(key, latestAt, keep, latestId, now)` keeps the receive
 * time and delivery id of the event it dispatched, and when it fired (`now`, Redis's clock), under `key` for
 * `keep` ms (`LAST_DISPATCHED_MS`; a group stored by an earlier version has none, or 0 for a route without a
 * script, and leaves no memory).
 */
const LAST_KEPT = `
local function keepLast(key, latestAt, keep, latestId, now)
  local ms = tonumber(keep)
  if not ms or ms <= 0 or not latestAt then return end
  redis.call('DEL', key)
  redis.call('HSET', key, 'at', latestAt, 'by', latestId or '', 'late', 0, 'fired', now)
  redis.call('PEXPIRE', key, math.ceil(ms))
end
`;

/**
 * Adds an event to its group (a hash), opening the group when it is the first: returns the group's
 * generation (a cluster-wide number, the id of its timer job), how many events it holds, and the
 * generation of the group it handed to firing (0 when none). Times are
 * Redis's own clock, so every instance measures the windows alike. The latest event wins by receive
 * time, as in memory; that time is Redis's too: now less how long ago (ARGV[2], ms, on the instance's
 * clock that is never set) the instance received it, in whole milliseconds (the millisecond it falls in: two
 * events received in the same one are ordered by when they are offered), so an instance whose clock is ahead does not keep a
 * newer event of another instance from replacing its own, nor a step of its clock while the event was in
 * the pipeline move when it was received. A group expires its max wait plus `ORPHAN_GRACE_MS` after
 * it opened (its firing key, a rename, keeps that time): one whose timer job was never stored, and that no
 * instance was up to sweep, does not stay in Redis for ever. The event's delivery id (KEYS[3],
 * recorded pending by the idempotency step) gets its hour (ARGV[6], s) and the value `joined` in the same step: an instance killed
 * right after the join leaves no id that lapses after its pending minute, whose retry would join again.
 * The group's due time (its quiet window's end or its max wait's, whichever comes first) is recorded in
 * KEYS[4] under `<generation>:<group id>` (ARGV[7]) in the same step: a group whose timer job was never
 * stored (its instance killed right after the join) is found by every instance's sweep.
 * A group already due whose timer has not taken it yet (Redis was away, or the timer is a moment late) is
 * not joined: it is taken for firing as its timer would take it (renamed to its firing key, ARGV[8] and
 * its generation, with the bound it reached), so it runs once, without the event, by whichever timer or
 * sweep comes to it (its due entry stays for the sweep), and the event opens a new group, as in memory,
 * where the group would have fired at its due time.
 *
 * A group holds, beside its latest event, how long after it fires its key remembers that event (`keep`, ms:
 * `LAST_DISPATCHED_MS`, far past the longest an earlier event can still be on its way: its body, a script
 * slot, its script) and the latest event's delivery id: once it fires (here, or by its timer) KEYS[5] keeps
 * that event's receive time for that long (`LAST_KEPT`). An event received before it, with no group pending
 * for its key, was superseded by that run: it opens no group and is counted there (`late`), and the call
 * returns generation 0, the count, the group handed on, and the delivery id that superseded it. The key's next group takes the count in as
 * superseded events (its `merged`), and the key's memory with it. One received once the group fired is never
 * superseded by its run, and neither is any while Redis's clock reads before the fire (set back since: a
 * step back would otherwise give every newer event an earlier time than the run's, for the memory's hour).
 *
 * Within a pending group alike: the group keeps when its latest event was offered (`offeredAt`, Redis's clock),
 * and an event joining it while Redis's clock reads before that (set back since) is taken for the newer one,
 * whatever the receive times say (a step back gives it an earlier time than the saved latest's, which would
 * have the run use the older payload and the newer event, answered coalesced, never run). A group stored by an
 * earlier version, without `offeredAt`, is judged by receive time alone, as before.
 */
const OFFER_SCRIPT = `
${LAST_KEPT}
redis.call('SET', KEYS[3], '${JOINED}', 'EX', ARGV[6], 'XX')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local receivedAt = math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 - tonumber(ARGV[2]))
local h = redis.call('HMGET', KEYS[1], 'gen', 'first', 'last', 'quiet', 'max', 'latestAt', 'keep', 'latestId',
  'offeredAt')
local handed = 0
if h[1] then
  local quietEnd = tonumber(h[3]) + tonumber(h[4])
  local maxEnd = tonumber(h[2]) + tonumber(h[5])
  if math.min(quietEnd, maxEnd) <= now then
    local reason = 'quiet_window'
    if maxEnd <= quietEnd then reason = 'max_wait' end
    local firing = ARGV[8] .. h[1]
    redis.call('RENAME', KEYS[1], firing)
    redis.call('HSET', firing, 'reason', reason)
    keepLast(KEYS[5], h[6], h[7], h[8], now)
    handed = tonumber(h[1])
    h[1] = false
  end
end
if not h[1] then
  local l = redis.call('HMGET', KEYS[5], 'at', 'by', 'late', 'fired')
  local fired = tonumber(l[4])
  if l[1] and receivedAt < tonumber(l[1]) and (not fired or (receivedAt < fired and now >= fired)) then
    local late = redis.call('HINCRBY', KEYS[5], 'late', 1)
    return {0, late, handed, l[2] or ''}
  end
  local merged = 1 + (tonumber(l[3]) or 0)
  redis.call('DEL', KEYS[5])
  local gen = redis.call('INCR', KEYS[2])
  redis.call('HSET', KEYS[1], 'gen', gen, 'merged', merged, 'first', now, 'last', now, 'latest', ARGV[1],
    'latestAt', receivedAt, 'offeredAt', now, 'quiet', ARGV[3], 'max', ARGV[4], 'keep', ARGV[9], 'latestId', ARGV[10])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[5]))
  redis.call('ZADD', KEYS[4], now + math.min(tonumber(ARGV[3]), tonumber(ARGV[4])), gen .. ':' .. ARGV[7])
  return {gen, merged, handed}
end
local merged = redis.call('HINCRBY', KEYS[1], 'merged', 1)
local offeredAt = tonumber(h[9])
if receivedAt >= tonumber(h[6]) or (offeredAt and now < offeredAt) then
  redis.call('HSET', KEYS[1], 'latest', ARGV[1], 'latestAt', receivedAt, 'offeredAt', now, 'last', now,
    'keep', ARGV[9], 'latestId', ARGV[10])
else
  redis.call('HSET', KEYS[1], 'last', now)
end
redis.call('ZADD', KEYS[4], math.min(now + tonumber(h[4]), tonumber(h[2]) + tonumber(h[5])), h[1] .. ':' .. ARGV[7])
return {tonumber(h[1]), merged, 0}
`;

/**
 * The group's timer job asks whether the group is due: `wait` (ms left: the quiet window restarted),
 * `gone`, or `fire` with its latest event, count and the bound it reached (`max_wait` when both end at
 * once, as in memory). Firing renames the group to its generation's firing key in the same step, and
 * stores that reason there, so a later event opens a new group, and a fire that dies before its run was
 * enqueued is finished, with the same reason, by whichever instance retries the timer job. A group taken
 * (here, or by an offer that found it due) or gone is no longer due (KEYS[3], its member ARGV[2]). Firing
 * keeps the time of its latest event under KEYS[4] (see `OFFER_SCRIPT`).
 */
const FIRE_SCRIPT = `
${LAST_KEPT}
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('ZREM', KEYS[3], ARGV[2])
  local f = redis.call('HMGET', KEYS[2], 'latest', 'merged', 'reason')
  return {'fire', f[1], f[2], f[3]}
end
local h = redis.call('HMGET', KEYS[1], 'gen', 'first', 'last', 'quiet', 'max', 'latest', 'merged', 'latestAt',
  'keep', 'latestId')
if not h[1] or h[1] ~= ARGV[1] then
  redis.call('ZREM', KEYS[3], ARGV[2])
  return {'gone'}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local quietEnd = tonumber(h[3]) + tonumber(h[4])
local maxEnd = tonumber(h[2]) + tonumber(h[5])
local due = math.min(quietEnd, maxEnd)
if now < due then return {'wait', tostring(due - now)} end
local reason = 'quiet_window'
if maxEnd <= quietEnd then reason = 'max_wait' end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], 'reason', reason)
redis.call('ZREM', KEYS[3], ARGV[2])
keepLast(KEYS[4], h[8], h[9], h[10], now)
return {'fire', h[6], h[7], reason}
`;

/**
 * The groups due more than ARGV[1] ms ago on Redis's clock (at most ARGV[2]), as `<generation>:<group id>`:
 * their timer job should have fired them by then, unless it was never stored.
 */
const OVERDUE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[2]))
`;

/** Which bound fired a shared group: its quiet window or its max wait (a stop flushes none). */
type CoalesceReason = Exclude<CoalesceGroupOutput["reason"], "flush">;

/**
 * How long past its max wait a group's key outlives it. A group fires by then unless every instance was
 * down that long (or its fire's retries, ~18 h, ran out): 30 days bound what is left without dropping a
 * group a long outage only delayed.
 */
export const ORPHAN_GRACE_MS = 30 * 24 * 3_600_000;

type CoalesceRedis = Redis & {
  svcCoalesceOffer(
    group: string,
    sequence: string,
    seen: string,
    due: string,
    last: string,
    latest: string,
    receivedMsAgo: number,
    quietMs: number,
    maxMs: number,
    graceMs: number,
    seenSeconds: number,
    groupId: string,
    firingPrefix: string,
    keepMs: number,
    deliveryId: string,
  ): Promise<[number, number, number, string?]>;
  svcCoalesceFire(
    group: string,
    firing: string,
    due: string,
    last: string,
    generation: string,
    member: string,
  ): Promise<Array<string | null>>;
  svcCoalesceOverdue(due: string, graceMs: number, limit: number): Promise<string[]>;
};

interface TimerJob {
  readonly group: string;
  readonly generation: number;
}

export interface SharedCoalescingOptions {
  readonly url: string;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly health: RedisHealth;
  readonly logger: Logger;
  /**
   * Enqueues the group's one run (idempotent per generation); `superseded` events were merged into it,
   * `reason` is the bound it reached (unknown only for a group taken by an older version that stored none).
   */
  dispatch(
    run: SharedRun,
    superseded: number,
    generation: number,
    reason: CoalesceReason | undefined,
  ): Promise<void>;
  readonly stall?: StallSettings;
  /** How a timer job whose fire failed is tried again (tests shorten it; FIRE_RETRY otherwise). */
  readonly fireRetry?: { readonly attempts: number; readonly backoffMs: number };
  /** How often this instance looks for overdue groups, and how far past due they are (tests shorten it; SWEEP otherwise). */
  readonly sweep?: { readonly everyMs: number; readonly graceMs: number };
  /**
   * The clock that is never set (`Clock.elapsed`), on which an event's `receivedTick` was read: how long ago it
   * was received (otherwise, and for an event without one, `Date.now()` less its `receivedAt`).
   */
  readonly elapsed?: () => number;
}

/**
 * A fire whose run could not be enqueued (Redis went away between taking the group and storing its run)
 * is tried again: the group waits under its firing key, and its events were answered 202. Doubling from
 * 1 s, 16 attempts span about 18 hours of outage.
 */
const FIRE_RETRY = { attempts: 16, backoffMs: 1000 };

/**
 * Every 30 s each instance stores the timer job of each group due more than 30 s ago (a no-op for a group
 * whose timer job is stored, which fires it on time): a group whose instance was killed between its join
 * and storing its timer fires within about a minute of its due time, as a killed instance's run is taken over.
 */
const SWEEP = { everyMs: 30_000, graceMs: 30_000 };
/** Overdue groups stored per sweep, at most (the next sweep takes the rest). */
const SWEEP_LIMIT = 1000;

export interface SharedCoalescing {
  /** Adds the event to its route's group for its key, shared by every instance; `not_grouped` when the key does not resolve. */
  offer(event: AcceptedEvent, run: SharedRun): Promise<Coalesced>;
  start(): void;
  close(drainMs: number): Promise<void>;
}

export function createSharedCoalescing(options: SharedCoalescingOptions): SharedCoalescing {
  const { redis, keys, health } = options;
  if (!("svcCoalesceOffer" in redis)) {
    redis.defineCommand("svcCoalesceOffer", { numberOfKeys: 5, lua: OFFER_SCRIPT });
    redis.defineCommand("svcCoalesceFire", { numberOfKeys: 4, lua: FIRE_SCRIPT });
    redis.defineCommand("svcCoalesceOverdue", { numberOfKeys: 1, lua: OVERDUE_SCRIPT });
  }
  const sweep = options.sweep ?? SWEEP;
  const client = redis as CoalesceRedis;
  const timers: SharedQueue<TimerJob> = createSharedQueue<TimerJob>({
    url: options.url,
    name: "coalesce",
    keys,
    health,
    logger: options.logger,
    concurrency: 8,
    retry: options.fireRetry ?? FIRE_RETRY,
    ...(options.stall === undefined ? {} : { stall: options.stall }),
    async process(data, _signal, job, token) {
      const firing = keys.coalesceFiring(data.generation);
      const answer = await client.svcCoalesceFire(
        keys.coalesceGroup(data.group),
        firing,
        keys.coalesceDue(),
        keys.coalesceLast(data.group),
        String(data.generation),
        `${data.generation}:${data.group}`,
      );
      if (answer[0] === "wait") {
        await job.moveToDelayed(Date.now() + Number(answer[1]), token);
        throw new DelayedError();
      }
      if (answer[0] !== "fire") return;
      const run = JSON.parse(answer[1] as string) as SharedRun;
      const reason = (answer[3] ?? undefined) as CoalesceReason | undefined;
      await options.dispatch(run, Number(answer[2]) - 1, data.generation, reason);
      await redis.del(firing);
    },
  });
  const elapsed = options.elapsed;
  /**
   * How long ago the event was received: on the clock that is never set when it was read there, so a step of
   * the system clock while it was in the pipeline (its body, its script) does not make it look received
   * earlier (before a group that fired meanwhile, which would supersede it) or later.
   */
  const receivedMsAgo = (event: AcceptedEvent, run: SharedRun) =>
    elapsed !== undefined && event.receivedTick !== undefined
      ? elapsed() - event.receivedTick
      : Date.now() - run.receivedAt;
  let sweeping: NodeJS.Timeout | undefined;
  /** Stores the timer job of each overdue group (a no-op where it is stored): it fires, or finds its group gone. */
  const sweepOverdue = async () => {
    try {
      const overdue = await client.svcCoalesceOverdue(keys.coalesceDue(), sweep.graceMs, SWEEP_LIMIT);
      for (const member of overdue) {
        const at = member.indexOf(":");
        const generation = Number(member.slice(0, at));
        await timers.enqueue(`coalesce-${generation}`, { group: member.slice(at + 1), generation });
        // Stored already but delayed on a clock set back since (its instance's or this one's): due on
        // Redis's clock, so it runs now (a group not due after all is delayed again by what is left).
        await timers.promote(`coalesce-${generation}`).catch(() => {});
      }
    } catch {
      // Redis unreachable: the connections report the outage, and the next sweep tries again.
    }
  };
  return {
    async offer(event, run) {
      const policy = event.route.coalesce;
      if (policy === undefined) return "not_grouped";
      const key = renderCoalesceKey(policy.key, event.payload, event.event);
      if (key === undefined) return "not_grouped";
      const group = coalesceGroupId(event.routeName, event.profile, key);
      const quietMs = timerDelay(policy.window_seconds * 1000);
      const maxMs = timerDelay(policy.max_wait_seconds * 1000);
      let generation: number;
      let handed: number;
      let supersededBy: string | undefined;
      try {
        [generation, , handed, supersededBy] = await client.svcCoalesceOffer(
          keys.coalesceGroup(group),
          keys.coalesceSequence(),
          keys.seen(seenKey(event.routeName, event.deliveryId)),
          keys.coalesceDue(),
          keys.coalesceLast(group),
          JSON.stringify(run),
          Math.max(0, receivedMsAgo(event, run)),
          quietMs,
          maxMs,
          ORPHAN_GRACE_MS,
          SEEN_TTL_SECONDS,
          group,
          keys.coalesceFiringPrefix(),
          LAST_DISPATCHED_MS,
          event.deliveryId,
        );
      } catch (err) {
        return health.fail(err);
      }
      // The group this event found due runs now, ahead of the one it opened: its timer job, stored (a no-op
      // when it is) and let run at once. Should that fail, the sweep finds it by its due time.
      if (handed !== 0)
        await timers
          .enqueue(`coalesce-${handed}`, { group, generation: handed })
          .then(() => timers.promote(`coalesce-${handed}`))
          .catch(() => {});
      if (generation === 0) {
        // Received before the event its key's last group dispatched: superseded by that run, grouped nowhere.
        options.logger.info(
          { route: event.routeName, delivery_id: event.deliveryId, superseded_by: supersededBy },
          `[webhook] ${event.routeName}: coalesced event superseded by a run already dispatched — it was received before that run's event (${supersededBy}), whose group fired before this one was through the pipeline; the key's next group counts it`,
        );
        return { supersededBy: supersededBy ?? "" };
      }
      // Every offer (re)makes the group's timer job: a no-op when it exists. It first asks at whichever
      // bound ends first: a max wait shorter than the window fires the group then.
      try {
        await timers.enqueue(
          `coalesce-${generation}`,
          { group, generation },
          { delayMs: Math.min(quietMs, maxMs) },
        );
      } catch (err) {
        if (!(err instanceof StateUnavailableError)) throw err;
        // The event is kept all the same, so it is answered 202, not 503 (whose retry would find it a
        // duplicate): the join stored it with its group's due time, and every instance's sweep stores the
        // timer of a group that is overdue (`sweepOverdue`), so the group fires about a minute late.
      }
      return "coalesced";
    },
    start() {
      timers.start();
      sweeping ??= setInterval(() => void sweepOverdue(), sweep.everyMs);
      sweeping.unref();
    },
    close(drainMs) {
      clearInterval(sweeping);
      sweeping = undefined;
      return timers.close(drainMs);
    },
  };
}

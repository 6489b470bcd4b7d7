import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { DirectOutcome } from "../../../streams/idempotencyRecord.js";
import { RecordPendingError } from "../../../streams/recordPending.js";
import { isRefusal, type RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** Delivery ids are remembered for an hour, like the in-memory cache. */
export const SEEN_TTL_SECONDS = 3600;
/**
 * How long an id is remembered before what it stands for is stored (`keep`): normally milliseconds. An
 * instance killed in between leaves the id for this long only, so the sender's retry is processed after
 * it instead of being answered `duplicate` for an hour with nothing stored.
 */
export const PENDING_TTL_SECONDS = 60;

/**
 * Deletes the key only while it still holds this request's token: a record whose SET timed out (a frozen
 * or overloaded Redis runs it late) is removed, never the record a retry or another instance made since.
 */
const FORGET_OWN_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * A record's value while its direct delivery is under way on some instance, and once it was delivered: a
 * duplicate reaching another instance meanwhile waits for the outcome (as one in the same process does).
 */
const DELIVERING = "delivering";
export const DELIVERED = "delivered";
/**
 * A record's value once its event joined a coalescing group (set by the join, which gives it its hour): no
 * job is stored under such an id, so its value tells a duplicate in the last minute of that hour from a
 * record still pending.
 */
export const JOINED = "joined";
/**
 * A record's value once it was carried over from this home's local backend (`carryIds`, at a start on
 * Redis after a switch from `local`): its event was accepted there, so no job is stored under it, and its
 * value tells a duplicate in the last minute of its hour from a record still pending, as `joined` does.
 * A direct delivery's id is carried over as `delivered`.
 */
export const CARRIED = "local";
/**
 * How often a duplicate of a delivery under way elsewhere looks again, and for how long at most (a stop
 * answers the requests in flight first: one waiting here holds it up that long at most).
 */
const DELIVERY_POLL_MS = 100;
export const DELIVERY_WAIT_MS = 30_000;
/**
 * How long a direct delivery's `delivering` record lives unless renewed (every third of it, while the
 * delivery runs). An instance killed mid-delivery leaves it this long at most: well within the
 * DELIVERY_WAIT_MS a duplicate on another instance watches it, so that duplicate sees the record go and is
 * answered 502 (its sender retries, and the retry delivers), not `duplicate` for a delivery nobody finished.
 * (With the pending minute, a duplicate that came within half a minute of the kill outwaited its watch and
 * was told `duplicate`.) Renewing every 5 s leaves a 10 s stall of the event loop or of Redis to spare.
 */
export const DELIVERING_TTL_SECONDS = 15;
/**
 * How long a duplicate waits at most while the record it found is still pending (its original not yet
 * stored): the original either stores its event (the record is kept: a duplicate) or is answered 503 and
 * removes the record — once Redis is back when it was the outage that refused it, which each instance
 * notices on its own, up to 2 s apart — and then this request is processed instead of being told
 * `duplicate` for an event nothing stored. A record still pending after the wait is a duplicate when what
 * it stands for is stored under it (its instance killed after storing, before giving the id its hour);
 * otherwise (killed before storing) it is answered 503 with Retry-After until the record is gone, and the
 * retry after that is processed.
 */
export const PENDING_WAIT_MS = 5000;

/** Unanswered records kept to be removed once Redis is back (one per request refused mid-command). */
const UNANSWERED_MAX = 10_000;

type OwnRedis = Redis & { svcForgetOwn(key: string, token: string): Promise<number> };

/** When a direct delivery was made (`performance.now()`), while its `delivered` mark is not in Redis. */
interface DeliveredMark {
  readonly at: number;
}

export interface SharedIdempotency {
  /**
   * Records `key` across every instance; resolves true when it was already recorded (a duplicate).
   * Rejects (503) when Redis does not answer; a record it then made anyway is removed, so the sender's
   * retry is processed instead of being answered `duplicate` for an event nothing stored.
   */
  checkAndAdd(key: string): Promise<boolean>;
  /**
   * The event `key` stands for is stored: the id is remembered for its hour (it was pending until now).
   * Never rejects: a key left pending expires, and the sender's retry then finds the job stored under it.
   */
  keep(key: string): Promise<void>;
  /**
   * Forgets `key` (a 503 or a failed direct delivery: the sender's retry must run). Never rejects: while
   * Redis is unreachable the key is kept here and forgotten once it is back.
   */
  forget(key: string): Promise<void>;
  /**
   * The direct delivery of `key` begins here: a duplicate on another instance waits for its outcome. The id
   * stays pending (its DELIVERING_TTL_SECONDS renewed while the delivery runs) until it ends: delivered, kept the hour.
   */
  delivering(key: string): void;
  /** The direct delivery of `key` succeeded (a failed one is forgotten). */
  delivered(key: string): void;
  /**
   * The gateway's stop ended the direct delivery of `key` (nothing sent): says so to the duplicates watching
   * it on other instances, just before the key is forgotten, so they are answered 503 as its sender is.
   */
  stopped(key: string): void;
  /**
   * For a key `checkAndAdd` just found recorded while its direct delivery was under way on some instance:
   * resolves true once it was delivered, false once it failed (the key was forgotten), "stopped" once the
   * stop of its instance ended it (forgotten too); undefined otherwise.
   * A delivery still under way after `DELIVERY_WAIT_MS` (a slow one, its record still renewed) counts as
   * delivered; one whose instance was killed is gone within DELIVERING_TTL_SECONDS: failed.
   */
  deliveredElsewhere(key: string): Promise<DirectOutcome> | undefined;
}

export function createSharedIdempotency(
  redis: Redis,
  keys: RedisKeys,
  health: RedisHealth,
  ttlSeconds = SEEN_TTL_SECONDS,
  pendingSeconds = PENDING_TTL_SECONDS,
  delivery: {
    readonly pollMs: number;
    readonly waitMs: number;
    readonly pendingWaitMs?: number;
    readonly deliveringSeconds?: number;
  } = {
    pollMs: DELIVERY_POLL_MS,
    waitMs: DELIVERY_WAIT_MS,
  },
  /**
   * Whether the run a key stands for is stored (a job under its id). Without it, a record still pending
   * after the wait is taken for a duplicate.
   */
  stored?: (key: string) => Promise<boolean>,
  /**
   * Makes the record of a key not seen yet: SET NX of `record` to `token` for `seconds` (what it resolves
   * to: "OK" when made, null when one was there), plus what the caller sends with it in the same command;
   * undefined for a key it leaves to the plain SET NX.
   */
  makeRecord?: (
    record: string,
    key: string,
    token: string,
    seconds: number,
  ) => Promise<string | null> | undefined,
): SharedIdempotency {
  const pendingWaitMs = delivery.pendingWaitMs ?? PENDING_WAIT_MS;
  const deliveringSeconds = delivery.deliveringSeconds ?? Math.min(DELIVERING_TTL_SECONDS, pendingSeconds);
  if (!("svcForgetOwn" in redis))
    redis.defineCommand("svcForgetOwn", { numberOfKeys: 1, lua: FORGET_OWN_SCRIPT });
  const client = redis as OwnRedis;
  /** Each record holds a token of its own: this instance's, and a number. */
  const instance = randomBytes(6).toString("base64url");
  let issued = 0;
  const toForget = new Set<string>();
  /**
   * Records whose SET got no answer while the connection went down, by key: their token, removed once
   * it is ready again. At most UNANSWERED_MAX (past that, the pending minute ends them).
   */
  const unanswered = new Map<string, string>();
  /**
   * Direct deliveries made whose `delivered` mark Redis has not taken yet (it was down, or did not answer),
   * by key: when each was made. The mark is sent again once the connection is ready, and every third of the
   * `delivering` lease meanwhile. At most UNANSWERED_MAX (past that, the oldest is given up).
   */
  const unmarked = new Map<string, DeliveredMark>();
  /**
   * Sends what waited for the connection. A write Redis refuses (full, read-only) was answered: the others
   * are sent all the same — a full Redis refuses a mark's SET and still takes a DEL, and no other `ready`
   * may come while the connection stays up. One that got no answer ends the round, until the next `ready`.
   */
  const forgetLater = async () => {
    for (const [key, mark] of [...unmarked]) if ((await writeMark(key, mark)) === "unanswered") return;
    for (const key of [...toForget]) {
      try {
        await redis.del(keys.seen(key));
        toForget.delete(key);
      } catch (err) {
        if (!isRefusal(err)) return;
      }
    }
    for (const [key, token] of [...unanswered]) {
      try {
        await client.svcForgetOwn(keys.seen(key), token);
        if (unanswered.get(key) === token) unanswered.delete(key);
      } catch (err) {
        if (!isRefusal(err)) return;
      }
    }
  };
  redis.on("ready", () => void forgetLater());
  /** A record of this instance's to remove once the connection is ready again. */
  const removeLater = (key: string, token: string) => {
    unanswered.delete(key);
    unanswered.set(key, token);
    if (unanswered.size > UNANSWERED_MAX) unanswered.delete(unanswered.keys().next().value as string);
  };
  /**
   * Sent at once: behind the SET on the same connection, so a SET a frozen Redis runs late is removed
   * right after it; while the connection is down, once it is ready again.
   */
  const forgetOwn = (key: string, token: string) => {
    client.svcForgetOwn(keys.seen(key), token).catch(() => removeLater(key, token));
  };
  /**
   * The token of each record this instance made whose event is not stored yet (neither kept nor
   * forgotten): a 503 removes that record only, never one the sender's retry made on another instance
   * while this one could not reach Redis. At most UNANSWERED_MAX (the oldest then forgotten by key alone).
   */
  const made = new Map<string, string>();
  /**
   * Direct deliveries under way here, by key: the timer that renews their `delivering` lease, or once
   * delivered, sends their mark again until Redis has taken it.
   */
  const renewing = new Map<string, NodeJS.Timeout>();
  const stopRenewing = (key: string) => {
    clearInterval(renewing.get(key));
    renewing.delete(key);
  };
  const renewEvery = (key: string, renew: () => void) => {
    stopRenewing(key);
    const timer = setInterval(renew, (deliveringSeconds * 1000) / 3);
    timer.unref();
    renewing.set(key, timer);
  };
  /**
   * Sends `key`'s `delivered` mark for what is left of the hour from its delivery: "taken" once Redis took
   * it (or the hour is over), "refused" when Redis answered with a refusal (full, read-only), "unanswered"
   * otherwise. Until taken the key stays in `unmarked`: sent again once the connection is back.
   */
  const writeMark = async (key: string, mark: DeliveredMark): Promise<"taken" | "refused" | "unanswered"> => {
    const left = Math.ceil(ttlSeconds - (performance.now() - mark.at) / 1000);
    try {
      if (left > 0) await redis.set(keys.seen(key), DELIVERED, "EX", left);
    } catch (err) {
      // Sent again in place of the lease's renewal: a lease sent behind a mark Redis ran without answering
      // (frozen, or killed right after running it) would undo it.
      if (unmarked.get(key) === mark && !renewing.has(key)) renewEvery(key, () => void writeMark(key, mark));
      return isRefusal(err) ? "refused" : "unanswered";
    }
    // A later delivery of the key (its record lost meanwhile) has its own outcome: not this mark's to end.
    if (unmarked.get(key) === mark) {
      unmarked.delete(key);
      stopRenewing(key);
    }
    return "taken";
  };
  /** Duplicates (on this instance) of deliveries under way elsewhere, by key: one watch each. */
  const elsewhere = new Map<string, Promise<DirectOutcome>>();
  const watch = (key: string): Promise<DirectOutcome> => {
    // Waits are timed on the clock that is never set: one set back (NTP) does not stretch them by the step.
    const until = performance.now() + delivery.waitMs;
    const outcome = (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, delivery.pollMs));
        const value = await redis.get(keys.seen(key)).catch(() => DELIVERED);
        if (value === null)
          return (await redis.exists(keys.stopped(key)).catch(() => 0)) === 1 ? "stopped" : false;
        if (value !== DELIVERING || performance.now() >= until) return true;
      }
    })();
    elsewhere.set(key, outcome);
    void outcome.finally(() => elsewhere.delete(key));
    return outcome;
  };
  /**
   * A duplicate's record as it is now: `delivering` (a direct delivery under way), `pending` (its original
   * not stored yet, or answered 503 and not yet removed), `gone`, or `kept` (stored: its hour, or delivered).
   */
  const recordState = async (
    key: string,
  ): Promise<{ state: "delivering" | "pending" | "gone" | "kept"; ttl: number }> => {
    const [value, ttl] = await Promise.all([redis.get(keys.seen(key)), redis.ttl(keys.seen(key))]);
    if (value === null) return { state: "gone", ttl };
    if (value === DELIVERING) return { state: "delivering", ttl };
    // (A run's kept record in the last minute of its hour looks pending too: its duplicate waits, then
    // finds the run stored under it and is one.)
    const pending =
      value !== DELIVERED &&
      value !== JOINED &&
      value !== CARRIED &&
      ttlSeconds > pendingSeconds &&
      ttl >= 0 &&
      ttl <= pendingSeconds;
    return { state: pending ? "pending" : "kept", ttl };
  };
  /** A record still pending after the wait: a duplicate only when what it stands for is stored. */
  const pendingAfterWait = async (key: string, ttl: number): Promise<true> => {
    if (stored === undefined || (await stored(key).catch(() => true))) return true;
    throw new RecordPendingError(Math.max(1, ttl));
  };
  const checkAndAdd = async (key: string, pendingUntil?: number): Promise<boolean> => {
    const token = `${instance}${(++issued).toString(36)}`;
    // Not ready: the command fails without being sent (no offline queue), so it made no record.
    const sent = redis.status === "ready";
    let set: string | null;
    try {
      const seconds = Math.min(pendingSeconds, ttlSeconds);
      set = await (makeRecord?.(keys.seen(key), key, token, seconds) ??
        redis.set(keys.seen(key), token, "EX", seconds, "NX"));
    } catch (err) {
      // Refused by Redis (full, read-only): answered, so nothing was recorded.
      if (sent && !isRefusal(err)) forgetOwn(key, token);
      return health.fail(err);
    }
    health.taken();
    if (set !== null) {
      made.delete(key);
      made.set(key, token);
      if (made.size > UNANSWERED_MAX) made.delete(made.keys().next().value as string);
      return false;
    }
    // A duplicate: when its original's direct delivery is under way, the answer waits for it; while its
    // original is not stored yet, this one waits to see whether it will be (PENDING_WAIT_MS). Only
    // duplicates pay this second round trip.
    if (elsewhere.has(key)) return true;
    const until = pendingUntil ?? performance.now() + pendingWaitMs;
    for (;;) {
      const { state, ttl } = await recordState(key).catch(() => ({ state: "kept" as const, ttl: -1 }));
      if (state === "delivering") watch(key);
      if (state === "gone") return checkAndAdd(key, until);
      if (state !== "pending") return true;
      if (performance.now() >= until) return pendingAfterWait(key, ttl);
      await new Promise((resolve) => setTimeout(resolve, delivery.pollMs));
    }
  };
  /**
   * The ids given their hour this turn, sent together at its end (one write to Redis, not one per id):
   * nothing waits for them (the answer went out before), so the batch adds no wait to any request. Any
   * other write of this instance's to a record (`delivering`, `delivered`, `forget`) sends them first, so
   * Redis runs the writes to one record in the order they were made.
   */
  let keeping: Array<{ readonly key: string; readonly resolve: () => void }> = [];
  const sendKeeps = () => {
    if (keeping.length === 0) return;
    const batch = keeping;
    keeping = [];
    const pipeline = redis.pipeline();
    for (const { key } of batch) pipeline.expire(keys.seen(key), ttlSeconds);
    // Redis went away after storing the events: their ids expire as pending (see above).
    void pipeline
      .exec()
      .catch(() => {})
      .then(() => {
        for (const { resolve } of batch) resolve();
      });
  };
  return {
    checkAndAdd: (key) => checkAndAdd(key),
    delivering(key) {
      sendKeeps();
      // Pending until it ends, as a run is until stored: an instance killed mid-delivery leaves the id
      // for DELIVERING_TTL_SECONDS at most, so the sender's retry delivers it (at least once), not
      // `duplicate` for an hour, and a duplicate watching it elsewhere sees it go (502).
      made.delete(key); // the record is `delivering` from here: a failed delivery forgets it by key
      unmarked.delete(key);
      const lease = () =>
        redis.set(keys.seen(key), DELIVERING, "EX", deliveringSeconds, "XX").catch(() => {});
      lease();
      const started = performance.now();
      renewEvery(key, () => (performance.now() - started >= ttlSeconds * 1000 ? stopRenewing(key) : lease()));
    },
    delivered(key) {
      sendKeeps();
      stopRenewing(key);
      made.delete(key);
      toForget.delete(key);
      // Whether or not the `delivering` lease is still there: a Redis frozen past it, down, or full must not
      // leave the id free once it takes writes again, for the sender's retry to post the message again.
      const mark: DeliveredMark = { at: performance.now() };
      unmarked.delete(key);
      unmarked.set(key, mark);
      if (unmarked.size > UNANSWERED_MAX) {
        const oldest = unmarked.keys().next().value as string;
        unmarked.delete(oldest);
        stopRenewing(oldest);
      }
      void writeMark(key, mark);
    },
    stopped(key) {
      sendKeeps();
      // Outlives the watchers' next look (they poll every pollMs); sent before the record's removal, on
      // the same connection, so a watcher that sees the record gone finds it.
      redis.set(keys.stopped(key), "1", "PX", Math.max(1000, delivery.pollMs * 10)).catch(() => {});
    },
    deliveredElsewhere: (key) => elsewhere.get(key),
    keep(key) {
      made.delete(key);
      return new Promise<void>((resolve) => {
        if (keeping.length === 0) setImmediate(sendKeeps);
        keeping.push({ key, resolve });
      });
    },
    async forget(key) {
      sendKeeps();
      stopRenewing(key);
      unmarked.delete(key);
      const token = made.get(key);
      made.delete(key);
      if (token !== undefined) {
        // Its own record only: while Redis was unreachable, the sender's retry may have reached another
        // instance, whose record (and the event it stored) stays.
        await client.svcForgetOwn(keys.seen(key), token).catch(() => removeLater(key, token));
        return;
      }
      try {
        await redis.del(keys.seen(key));
      } catch {
        toForget.add(key);
      }
    },
  };
}

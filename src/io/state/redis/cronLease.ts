import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/**
 * A lease is kept until every instance has moved past its due time: twice the time to the job's next due
 * time (an instance back from away claims the schedule's latest due time, which the others may have run,
 * until the next one comes), and at least a few minutes past any clock skew between instances. It expires
 * by itself: a job `every 1s` keeps about 300 keys, not one per second of a day.
 */
const MIN_LEASE_MS = 5 * 60 * 1000;
/** The lease of a due time whose next one is not known. */
const LEASE_MS = 24 * 60 * 60 * 1000;

function leaseMs(dueAt: string, nextDueAt: string | undefined): number {
  const gap = nextDueAt === undefined ? Number.NaN : Date.parse(nextDueAt) - Date.parse(dueAt);
  return Number.isFinite(gap) && gap > 0 ? Math.max(MIN_LEASE_MS, 2 * gap) : LEASE_MS;
}

/**
 * A due time held ahead while a run goes on: claimed again at every check of the instance running it, so
 * it lapses soon after that instance dies mid-run (the occurrence then runs on another).
 */
const HOLD_MS = 60 * 1000;

/**
 * Taken when free, and won again by the instance that holds it (a due time it held ahead of time),
 * its expiry set anew.
 */
const CLAIM_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
`;

/** Given back only by the instance that holds it. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Whether a due time is held ahead by another holder (what is left of its expiry is at most a hold's), or
 * free: 1; claimed for a run (a lease is kept minutes at least) or by this holder: 0.
 */
const HELD_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if not holder then return 1 end
if holder == ARGV[1] then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left >= 0 and left <= tonumber(ARGV[2]) then return 1 end
return 0
`;

/**
 * How far back `claimedDueTimes` reads: at most this many due times, in one MGET. A job `every 1s` has about
 * 600 whose claims may still be kept (5 minutes, and as long again for clocks that disagree).
 */
const MAX_READ = 1000;

/**
 * Whether a claim of `dueAt` may still be kept at `now`: an instance claims a due time by the time the next
 * one comes (later, it claims that one instead), and keeps it `leaseMs` from then; with as long again as the
 * shortest lease for clocks that disagree.
 */
function mayBeKept(dueAt: string, nextDueAt: string, now: number): boolean {
  return Date.parse(nextDueAt) + leaseMs(dueAt, nextDueAt) + MIN_LEASE_MS > now;
}

/** A due time of a job and the one after it, which bounds how long its claim is kept. */
export interface DueTime {
  readonly dueAt: string;
  readonly nextDueAt: string;
}

/** What `claimedDueTimes` found among the due times it was given. */
export interface ClaimsRead {
  /** The latest of them some instance claimed (every one after it was read and has no claim). */
  readonly latest?: string;
  /**
   * With no claim found: the latest due time not read, its claim lapsed by now (or past the MAX_READ read),
   * and how long such a claim is kept. Undefined when every one given was read.
   */
  readonly unread?: { readonly dueAt: string; readonly keptMs: number };
}

type LeaseRedis = Redis & {
  svcCronClaim(key: string, holder: string, ms: number): Promise<number>;
  svcCronRelease(key: string, holder: string): Promise<number>;
  svcCronHeld(key: string, holder: string, ms: number): Promise<number>;
};

/**
 * One instance runs a cron job per due time: the first to claim the job's key for that due time
 * wins (this instance again when it holds it already), the others skip it. Rejects
 * (StateUnavailableError) while Redis is unreachable.
 */
export interface CronLease {
  /**
   * `ahead`: a due time held while a run goes on, kept only while it is claimed again (every check).
   * `nextDueAt`: the job's due time after this one, which bounds how long the lease is kept (a day without it).
   */
  claim(profile: string, jobId: string, dueAt: string, ahead?: boolean, nextDueAt?: string): Promise<boolean>;
  /** Gives back a due time this instance claimed ahead of time (its run ended before it came). */
  release(profile: string, jobId: string, dueAt: string): Promise<void>;
  /** What this process's claims hold (a token of its own): noted with a scheduled run (`releaseHeld`). */
  readonly holder: string;
  /**
   * Gives back a due time that `holder` claimed: a process of this SVC_HOME that is gone (killed during the
   * run, its note says so) and whose claim would otherwise keep every instance from the occurrence until it
   * lapses. True when it was released; false when that holder no longer has it (lapsed, or another
   * instance's since). Rejects (StateUnavailableError) while Redis is unreachable.
   */
  releaseHeld(profile: string, jobId: string, dueAt: string, holder: string): Promise<boolean>;
  /**
   * Whether a due time this instance could not claim is only held ahead by another instance (whose run of
   * the job went on when it came; a hold lapses within a minute unless claimed again) or free by now — not
   * claimed for a run. Rejects (StateUnavailableError) while Redis is unreachable.
   */
  heldAhead(profile: string, jobId: string, dueAt: string): Promise<boolean>;
  /**
   * The latest of a job's due times that some instance claimed, among `dueTimes` (latest first, each with the
   * one after it): read while a claim of theirs may still be kept at `now` (5 minutes at least, twice the
   * time to the next one), at most MAX_READ of them, in one MGET of their keys — no SCAN, so the size of the
   * keyspace and an ACL that refuses SCAN do not matter. `dueTimes` is taken lazily, no further than read.
   * Rejects with Redis's error when it does not answer, which the Redis health does not count.
   */
  claimedDueTimes(
    profile: string,
    jobId: string,
    dueTimes: Iterable<DueTime>,
    now: number,
  ): Promise<ClaimsRead>;
}

export function createCronLease(redis: Redis, keys: RedisKeys, health: RedisHealth): CronLease {
  const holder = randomUUID();
  if (!("svcCronClaim" in redis)) {
    redis.defineCommand("svcCronClaim", { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    redis.defineCommand("svcCronRelease", { numberOfKeys: 1, lua: RELEASE_SCRIPT });
  }
  if (!("svcCronHeld" in redis)) redis.defineCommand("svcCronHeld", { numberOfKeys: 1, lua: HELD_SCRIPT });
  const client = redis as LeaseRedis;
  return {
    holder,
    async releaseHeld(profile, jobId, dueAt, held) {
      try {
        return (await client.svcCronRelease(keys.cronLease(profile, jobId, dueAt), held)) === 1;
      } catch (err) {
        return health.fail(err);
      }
    },
    async claim(profile, jobId, dueAt, ahead = false, nextDueAt) {
      const key = keys.cronLease(profile, jobId, dueAt);
      let won: number;
      try {
        won = await client.svcCronClaim(key, holder, ahead ? HOLD_MS : leaseMs(dueAt, nextDueAt));
      } catch (err) {
        return health.fail(err);
      }
      // A write taken (or a lease found held, which a refusing Redis would not have answered).
      health.taken();
      return won === 1;
    },
    async heldAhead(profile, jobId, dueAt) {
      try {
        return (await client.svcCronHeld(keys.cronLease(profile, jobId, dueAt), holder, HOLD_MS)) === 1;
      } catch (err) {
        return health.fail(err);
      }
    },
    async claimedDueTimes(profile, jobId, dueTimes, now) {
      const read: string[] = [];
      let unread: ClaimsRead["unread"];
      for (const { dueAt, nextDueAt } of dueTimes) {
        if (read.length >= MAX_READ || !mayBeKept(dueAt, nextDueAt, now)) {
          unread = { dueAt, keptMs: leaseMs(dueAt, nextDueAt) };
          break;
        }
        read.push(dueAt);
      }
      if (read.length === 0) return unread === undefined ? {} : { unread };
      // Its failure is not the state's (a read refused does not make Redis read as refusing writes): the count
      // it serves is then made without it.
      const held = await client.mget(...read.map((dueAt) => keys.cronLease(profile, jobId, dueAt)));
      const at = held.findIndex((holder) => holder !== null);
      const latest = at < 0 ? undefined : read[at];
      if (latest !== undefined) return { latest };
      return unread === undefined ? {} : { unread };
    },
    async release(profile, jobId, dueAt) {
      try {
        await client.svcCronRelease(keys.cronLease(profile, jobId, dueAt), holder);
      } catch (err) {
        health.fail(err);
      }
    },
  };
}

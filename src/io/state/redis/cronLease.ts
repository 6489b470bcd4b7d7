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
 * `claimedDueTimes` reads the job's leases with SCAN, which walks the whole keyspace: at most this many
 * calls of SCAN_COUNT keys each (a job `every 1s` keeps about 300 leases; the bound only keeps a Redis of
 * millions of keys from holding the check up).
 */
const SCAN_CALLS = 200;
const SCAN_COUNT = 1000;

/** A due time as svc writes it (and a key of another job, whose id begins with this one's and `:`, is not). */
const DUE_TIME = /^\d{4}-\d\d-\d\dT/;

/** `text` matched literally by a SCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
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
   * The due times of a job whose lease any instance still keeps (claimed for a run, kept at least 5 minutes
   * and twice the time to the next one, or held ahead): the occurrences some instance ran, for a catch-up
   * that counts the ones none did. Read with a bounded SCAN: in a Redis of more keys than it reads, some
   * may be left out (never one that is not claimed). Rejects with Redis's error when it does not answer the
   * SCAN (unreachable, or an ACL that refuses it), which the Redis health does not count.
   */
  claimedDueTimes(profile: string, jobId: string): Promise<string[]>;
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
    async claimedDueTimes(profile, jobId) {
      const prefix = keys.cronLease(profile, jobId, "");
      const match = `${globLiteral(prefix)}*`;
      const found = new Set<string>();
      // Its failure is not the state's (a SCAN an ACL refuses does not make Redis read as refusing writes):
      // the count it serves is then made without it.
      let cursor = "0";
      for (let calls = 0; calls < SCAN_CALLS; calls++) {
        const [next, batch] = await client.scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT);
        for (const key of batch) {
          const dueAt = key.slice(prefix.length);
          if (key.startsWith(prefix) && DUE_TIME.test(dueAt) && Number.isFinite(Date.parse(dueAt)))
            found.add(dueAt);
        }
        cursor = next;
        if (cursor === "0") break;
      }
      return [...found];
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

import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** A lease outlives any clock skew between instances, and expires by itself. */
const LEASE_MS = 24 * 60 * 60 * 1000;

/**
 * One instance runs a cron job per due time: the first to `SET NX` the job's key for that due time
 * wins, the others skip it. Rejects (StateUnavailableError) while Redis is unreachable.
 */
export interface CronLease {
  claim(profile: string, jobId: string, dueAt: string): Promise<boolean>;
}

export function createCronLease(redis: Redis, keys: RedisKeys, health: RedisHealth): CronLease {
  const holder = randomUUID();
  return {
    async claim(profile, jobId, dueAt) {
      try {
        return (
          (await redis.set(keys.cronLease(profile, jobId, dueAt), holder, "PX", LEASE_MS, "NX")) === "OK"
        );
      } catch (err) {
        return health.fail(err);
      }
    },
  };
}

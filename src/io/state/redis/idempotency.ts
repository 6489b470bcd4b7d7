import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** Delivery ids are remembered for an hour, like the in-memory cache. */
export const SEEN_TTL_SECONDS = 3600;
/**
 * How long an id is remembered before what it stands for is stored (`keep`): normally milliseconds. An
 * instance killed in between leaves the id for this long only, so the sender's retry is processed after
 * it instead of being answered `duplicate` for an hour with nothing stored.
 */
export const PENDING_TTL_SECONDS = 60;

export interface SharedIdempotency {
  /** Records `key` across every instance; resolves true when it was already recorded (a duplicate). */
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
}

export function createSharedIdempotency(
  redis: Redis,
  keys: RedisKeys,
  health: RedisHealth,
  ttlSeconds = SEEN_TTL_SECONDS,
  pendingSeconds = PENDING_TTL_SECONDS,
): SharedIdempotency {
  const toForget = new Set<string>();
  const forgetLater = async () => {
    for (const key of [...toForget]) {
      try {
        await redis.del(keys.seen(key));
        toForget.delete(key);
      } catch {
        return;
      }
    }
  };
  redis.on("ready", () => void forgetLater());
  return {
    async checkAndAdd(key) {
      let set: string | null;
      try {
        set = await redis.set(keys.seen(key), "1", "EX", Math.min(pendingSeconds, ttlSeconds), "NX");
      } catch (err) {
        return health.fail(err);
      }
      return set === null;
    },
    async keep(key) {
      try {
        await redis.expire(keys.seen(key), ttlSeconds);
      } catch {
        // Redis went away after storing the event: the id expires as pending (see above).
      }
    },
    async forget(key) {
      try {
        await redis.del(keys.seen(key));
      } catch {
        toForget.add(key);
      }
    },
  };
}

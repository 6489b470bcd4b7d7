import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** Delivery ids are remembered for an hour, like the in-memory cache. */
export const SEEN_TTL_SECONDS = 3600;

export interface SharedIdempotency {
  /** Records `key` across every instance; resolves true when it was already recorded (a duplicate). */
  checkAndAdd(key: string): Promise<boolean>;
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
        set = await redis.set(keys.seen(key), "1", "EX", ttlSeconds, "NX");
      } catch (err) {
        return health.fail(err);
      }
      return set === null;
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

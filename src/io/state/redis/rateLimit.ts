import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/**
 * One fixed window per route shared by every instance: the window opens at the route's first request
 * (the counter's first INCR sets its expiry) and lasts `windowMs`, like the in-memory limiter. A
 * request over the limit (ARGV[2]) is not counted, as in the in-memory limiter, so a reload that raises
 * the limit lets exactly the difference through. Returns the count with this request (over the limit:
 * one more than the count) and the milliseconds until the window closes.
 */
const WINDOW_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if used >= tonumber(ARGV[2]) and ttl >= 0 then
  return {used + 1, ttl}
end
used = redis.call('INCR', KEYS[1])
if used == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {used, ttl}
`;

export interface SharedRateLimiter {
  /** Counts the request in the route's shared window; true when it fits (false → 429). */
  tryAcquire(route: string): Promise<boolean>;
  /** True while this instance last heard the route's window is spent (no Redis call: the 429 gate before auth). */
  isSpent(route: string): boolean;
  /** Milliseconds until the route's window closes, as the last answer from Redis said (0 when none). */
  msUntilReset(route: string): number;
  /** A new limit (config reload); open windows keep their count. */
  setLimit(limit: number): void;
}

type WindowRedis = Redis & {
  svcRateWindow(key: string, windowMs: number, limit: number): Promise<[number, number]>;
};

export function createSharedRateLimiter(
  redis: Redis,
  keys: RedisKeys,
  health: RedisHealth,
  options: { limit: number; windowMs: number; now?: () => number },
): SharedRateLimiter {
  let { limit } = options;
  const now = options.now ?? Date.now;
  if (!("svcRateWindow" in redis))
    redis.defineCommand("svcRateWindow", { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  const client = redis as WindowRedis;
  const resets = new Map<string, number>();
  /** Routes whose window the last answer said was spent, and when that window closes. */
  const spentUntil = new Map<string, number>();
  return {
    async tryAcquire(route) {
      let answer: [number, number];
      try {
        answer = await client.svcRateWindow(keys.rate(route), options.windowMs, limit);
      } catch (err) {
        return health.fail(err);
      }
      const [used, ttl] = answer;
      resets.set(route, now() + ttl);
      if (used <= limit) {
        spentUntil.delete(route);
        return true;
      }
      spentUntil.set(route, now() + ttl);
      return false;
    },
    isSpent(route) {
      const until = spentUntil.get(route);
      if (until === undefined) return false;
      if (until > now()) return true;
      spentUntil.delete(route);
      return false;
    },
    msUntilReset(route) {
      const at = resets.get(route);
      return at === undefined ? 0 : Math.max(0, Math.min(options.windowMs, at - now()));
    },
    setLimit(next) {
      // A window spent under the old limit is judged again by Redis at its next request (a raised limit
      // applies at once, as with the local limiter); a lowered one spends it there too.
      if (next !== limit) spentUntil.clear();
      limit = next;
    },
  };
}

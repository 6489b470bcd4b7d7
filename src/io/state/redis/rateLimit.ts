import type { Redis } from "ioredis";
import type { RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/**
 * One fixed window per route shared by every instance: the window opens at the route's first request
 * (the counter's first count sets its expiry) and lasts `windowMs`, like the in-memory limiter. ARGV[3]
 * requests are counted at once, as many as fit under the limit (ARGV[2]); one over it is not counted, as
 * in the in-memory limiter, so a reload that raises the limit lets exactly the difference through. A
 * counter left without an expiry gets one. Returns how many fit and the milliseconds until the window
 * closes.
 */
const WINDOW_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
local fit = math.max(0, math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) - used))
if fit > 0 then
  redis.call('INCRBY', KEYS[1], fit)
end
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {fit, ttl}
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
  svcRateWindow(key: string, windowMs: number, limit: number, count: number): Promise<[number, number]>;
};

interface Waiting {
  resolve(fits: boolean): void;
  reject(err: unknown): void;
}

/**
 * The requests of one event-loop turn are counted together, one call to Redis per route, in the order
 * they came: a burst costs one round trip per turn instead of one per request (and a badly signed one,
 * counted before its signature is checked, no more than that).
 */
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
  /** This turn's requests by route, not yet sent. */
  let turn = new Map<string, Waiting[]>();
  const count = async (route: string, waiting: readonly Waiting[]) => {
    let answer: [number, number];
    try {
      answer = await client.svcRateWindow(keys.rate(route), options.windowMs, limit, waiting.length);
    } catch (err) {
      let failure: unknown = err;
      try {
        health.fail(err);
      } catch (named) {
        failure = named;
      }
      for (const w of waiting) w.reject(failure);
      return;
    }
    const [fit, ttl] = answer;
    resets.set(route, now() + ttl);
    if (fit < waiting.length) spentUntil.set(route, now() + ttl);
    else spentUntil.delete(route);
    for (const [i, w] of waiting.entries()) w.resolve(i < fit);
  };
  const send = () => {
    const sent = turn;
    turn = new Map();
    for (const [route, waiting] of sent) void count(route, waiting);
  };
  return {
    tryAcquire(route) {
      return new Promise<boolean>((resolve, reject) => {
        if (turn.size === 0) setImmediate(send);
        const waiting = turn.get(route);
        if (waiting === undefined) turn.set(route, [{ resolve, reject }]);
        else waiting.push({ resolve, reject });
      });
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

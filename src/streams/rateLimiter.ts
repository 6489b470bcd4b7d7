/**
 * Fixed-window rate limit (spec 8: `rate_limit` requests per minute, counted per route). A window
 * starts at floor(now / windowMs) * windowMs for every key alike, so when time enters a new window all
 * older counters are dropped at once: memory holds only the keys seen in the current window.
 */
export interface FixedWindowLimiter {
  /** True when the request fits in `key`'s current window (and counts it); false → answer 429. */
  tryAcquire(key: string): boolean;
}

export interface FixedWindowOptions {
  limit: number;
  windowMs: number;
  now: () => number;
}

export function createFixedWindowLimiter(options: FixedWindowOptions): FixedWindowLimiter {
  const { limit, now } = options;
  const windowMs = Math.max(1, options.windowMs);
  let windowStart = Number.NaN;
  const counts = new Map<string, number>();

  return {
    tryAcquire(key) {
      const start = Math.floor(now() / windowMs) * windowMs;
      if (start !== windowStart) {
        windowStart = start;
        counts.clear();
      }
      const used = counts.get(key) ?? 0;
      if (used >= limit) return false;
      counts.set(key, used + 1);
      return true;
    },
  };
}

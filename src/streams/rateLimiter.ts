/**
 * Fixed-window rate limit (`rate_limit` requests per minute, counted per route). Each route's
 * window opens at its first request and lasts `windowMs`; the first request after it closes opens the
 * next one. A burst therefore gets exactly one budget wherever it falls on the clock (windows aligned
 * to the clock minute would give a burst across a minute boundary two).
 */
export interface FixedWindowLimiter {
  /** True when the request fits in `key`'s current window (and counts it); false → answer 429. */
  tryAcquire(key: string): boolean;
  /** True when `key`'s current window is open and its quota spent (counts nothing). */
  isSpent(key: string): boolean;
  /** Milliseconds until `key`'s current window closes (0 when it has none open). */
  msUntilReset(key: string): number;
  /** A new limit (config reload): open windows keep their start and their count. */
  setLimit(limit: number): void;
}

export interface FixedWindowOptions {
  limit: number;
  windowMs: number;
  now: () => number;
}

interface Window {
  start: number;
  used: number;
}

/** Past this many keys, windows that have closed are dropped (keys are route names: normally a handful). */
const PRUNE_ABOVE = 1024;

export function createFixedWindowLimiter(options: FixedWindowOptions): FixedWindowLimiter {
  const { now } = options;
  let { limit } = options;
  const windowMs = Math.max(1, options.windowMs);
  const windows = new Map<string, Window>();

  const prune = (at: number) => {
    for (const [key, window] of windows) if (at - window.start >= windowMs) windows.delete(key);
  };

  return {
    tryAcquire(key) {
      const at = now();
      let window = windows.get(key);
      if (window === undefined) {
        if (windows.size >= PRUNE_ABOVE) prune(at);
        window = { start: at, used: 0 };
        windows.set(key, window);
      } else if (at - window.start >= windowMs || at < window.start) {
        // A closed window (or a clock that stepped back) opens a new one.
        window.start = at;
        window.used = 0;
      }
      if (window.used >= limit) return false;
      window.used++;
      return true;
    },
    isSpent(key) {
      const window = windows.get(key);
      if (window === undefined) return false;
      const at = now();
      if (at - window.start >= windowMs || at < window.start) return false;
      return window.used >= limit;
    },
    setLimit(next) {
      limit = next;
    },
    msUntilReset(key) {
      const window = windows.get(key);
      if (window === undefined) return 0;
      return Math.max(0, Math.min(windowMs, window.start + windowMs - now()));
    },
  };
}

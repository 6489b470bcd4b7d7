/**
 * Delivery-ID idempotency cache (spec 6: IDs remembered for 1 hour). Entries expire `ttlMs` after
 * they were first seen; seeing a duplicate does not extend its life. The Map keeps insertion order,
 * which is also expiry order (same TTL for all), so expired entries are swept from the front and the
 * oldest entry is dropped when `maxEntries` is reached: every operation is amortized O(1).
 */
export interface SeenCache {
  /** True when `key` was seen within the TTL (a duplicate); otherwise records it and returns false. */
  checkAndAdd(key: string): boolean;
  has(key: string): boolean;
  size(): number;
  /** Forgets `key`, e.g. so a sender's retry is processed after a failed dispatch. */
  delete(key: string): void;
}

export interface SeenCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
}

export function createSeenCache(options: SeenCacheOptions): SeenCache {
  const { ttlMs, now } = options;
  const maxEntries = Math.max(1, Math.floor(options.maxEntries));
  const expiresAt = new Map<string, number>();

  function sweep(at: number): void {
    for (const [key, expiry] of expiresAt) {
      if (expiry > at) return;
      expiresAt.delete(key);
    }
  }

  function live(key: string, at: number): boolean {
    const expiry = expiresAt.get(key);
    return expiry !== undefined && expiry > at;
  }

  return {
    checkAndAdd(key) {
      const at = now();
      sweep(at);
      if (live(key, at)) return true;
      expiresAt.delete(key);
      while (expiresAt.size >= maxEntries) {
        const oldest = expiresAt.keys().next();
        if (oldest.done === true) break;
        expiresAt.delete(oldest.value);
      }
      expiresAt.set(key, at + ttlMs);
      return false;
    },
    has(key) {
      return live(key, now());
    },
    size() {
      sweep(now());
      return expiresAt.size;
    },
    delete(key) {
      expiresAt.delete(key);
    },
  };
}

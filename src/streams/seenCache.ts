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

interface Entry {
  readonly key: string;
  readonly expiry: number;
  /** Set when the entry left the map (deleted or replaced), so its array slot is skipped without a lookup. */
  gone: boolean;
}

/**
 * A Map for lookups plus an insertion-ordered array (with a moving head) for expiry and eviction.
 * Deleting from the front of a V8 Map and iterating it from the front again is not O(1): the
 * iterator walks every deleted slot until the table is rehashed, which made a full cache cost
 * ~100 µs per request. The array front is O(1); stale array entries (deleted or re-added keys) are
 * marked `gone` and skipped, so an eviction costs one map operation (the map is large: every lookup
 * is a likely cache miss).
 */
export function createSeenCache(options: SeenCacheOptions): SeenCache {
  const { ttlMs, now } = options;
  const maxEntries = Math.max(1, Math.floor(options.maxEntries));
  const entries = new Map<string, Entry>();
  let order: Entry[] = [];
  let head = 0;

  function dropFront(): void {
    const entry = order[head] as Entry;
    head += 1;
    if (!entry.gone) {
      entry.gone = true;
      entries.delete(entry.key);
    }
    if (head > 1024 && head * 2 > order.length) {
      order = order.slice(head);
      head = 0;
    }
  }

  function sweep(at: number): void {
    while (head < order.length && (order[head] as Entry).expiry <= at) dropFront();
  }

  function live(key: string, at: number): boolean {
    const entry = entries.get(key);
    return entry !== undefined && entry.expiry > at;
  }

  return {
    checkAndAdd(key) {
      const at = now();
      sweep(at);
      const found = entries.get(key);
      if (found !== undefined) {
        if (found.expiry > at) return true;
        found.gone = true;
        entries.delete(key);
      }
      while (entries.size >= maxEntries && head < order.length) dropFront();
      const entry: Entry = { key, expiry: at + ttlMs, gone: false };
      entries.set(key, entry);
      order.push(entry);
      return false;
    },
    has(key) {
      return live(key, now());
    },
    size() {
      sweep(now());
      return entries.size;
    },
    delete(key) {
      const found = entries.get(key);
      if (found === undefined) return;
      found.gone = true;
      entries.delete(key);
    },
  };
}

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
}

/**
 * A Map for lookups plus an insertion-ordered array (with a moving head) for expiry and eviction.
 * Deleting from the front of a V8 Map and iterating it from the front again is not O(1): the
 * iterator walks every deleted slot until the table is rehashed, which made a full cache cost
 * ~100 µs per request. The array front is O(1); stale array entries (deleted or re-added keys) are
 * recognised by identity and skipped.
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
    if (entries.get(entry.key) === entry) entries.delete(entry.key);
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
      if (live(key, at)) return true;
      entries.delete(key);
      while (entries.size >= maxEntries && head < order.length) dropFront();
      const entry = { key, expiry: at + ttlMs };
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
      entries.delete(key);
    },
  };
}

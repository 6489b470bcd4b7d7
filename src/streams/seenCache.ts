/**
 * Delivery-ID idempotency cache (IDs remembered for 1 hour). Entries expire `ttlMs` after
 * they were first seen; seeing a duplicate does not extend its life.
 */
export interface SeenCache {
  /** True when `key` was seen within the TTL (a duplicate); otherwise records it and returns false. */
  checkAndAdd(key: string): boolean;
  has(key: string): boolean;
  size(): number;
  /** Forgets `key`, e.g. so a sender's retry is processed after a failed dispatch. */
  delete(key: string): void;
  /** The live entries, oldest first, with the time each expires (kept across a restart). */
  entries(): Array<[key: string, expiresAt: number]>;
  /** Adds entries saved by `entries()` (at startup, before any request); expired ones and keys already present are skipped. */
  restore(entries: ReadonlyArray<readonly [string, number]>): void;
}

export interface SeenCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
}

/**
 * A Map from key to its slot in a ring of (key, expiry) pairs kept in insertion order, which is also
 * expiry order. Expired entries are swept from the ring's head and the oldest is dropped at
 * `maxEntries`: every operation is amortized O(1). Two traps avoided, both measured under load:
 * - deleting from the front of a V8 `Map` and iterating it from the front again walks every deleted
 *   slot until the table rehashes (~100 µs per request once 100 000 ids are stored);
 * - an object per entry (plus a boxed expiry) is two more old-generation objects per request for the
 *   garbage collector; the ring stores keys in one array and expiries in one `Float64Array`.
 * A slot whose key was deleted or re-added no longer matches `slots.get(key)` and is skipped.
 */
export function createSeenCache(options: SeenCacheOptions): SeenCache {
  const { ttlMs, now } = options;
  const maxEntries = Math.max(1, Math.floor(options.maxEntries));
  const slots = new Map<string, number>();
  // Room for every live entry plus as many stale slots; compacted when full (only after many deletes).
  let capacity = Math.min(2 * maxEntries, 1024);
  let keys: (string | undefined)[] = new Array(capacity);
  let expiries = new Float64Array(capacity);
  let head = 0;
  let used = 0;

  const current = (slot: number) => {
    const key = keys[slot];
    return key !== undefined && slots.get(key) === slot;
  };

  function dropHead(): void {
    const key = keys[head];
    if (key !== undefined && slots.get(key) === head) slots.delete(key);
    keys[head] = undefined;
    head = (head + 1) % capacity;
    used -= 1;
  }

  /** Rebuilds the ring with only current slots; grows it (up to twice `maxEntries`) when still full. */
  function compact(): void {
    const liveKeys: string[] = [];
    const liveExpiries: number[] = [];
    for (let i = 0; i < used; i++) {
      const slot = (head + i) % capacity;
      if (current(slot)) {
        liveKeys.push(keys[slot] as string);
        liveExpiries.push(expiries[slot] as number);
      }
    }
    if (liveKeys.length * 2 > capacity) capacity = Math.min(capacity * 2, 2 * maxEntries);
    keys = new Array(capacity);
    expiries = new Float64Array(capacity);
    slots.clear();
    for (let i = 0; i < liveKeys.length; i++) {
      keys[i] = liveKeys[i];
      expiries[i] = liveExpiries[i] as number;
      slots.set(liveKeys[i] as string, i);
    }
    head = 0;
    used = liveKeys.length;
  }

  /** Adds `key` at the ring's tail (expiries only grow along the ring), evicting the oldest at the cap. */
  function append(key: string, expiresAt: number): void {
    while (slots.size >= maxEntries && used > 0) dropHead();
    if (used === capacity) compact();
    const slot = (head + used) % capacity;
    keys[slot] = key;
    expiries[slot] = expiresAt;
    slots.set(key, slot);
    used += 1;
  }

  function sweep(at: number): void {
    while (used > 0 && (expiries[head] as number) <= at) dropHead();
  }

  function live(key: string, at: number): boolean {
    const slot = slots.get(key);
    return slot !== undefined && (expiries[slot] as number) > at;
  }

  return {
    checkAndAdd(key) {
      const at = now();
      sweep(at);
      const found = slots.get(key);
      if (found !== undefined) {
        if ((expiries[found] as number) > at) return true;
        slots.delete(key);
      }
      append(key, at + ttlMs);
      return false;
    },
    has(key) {
      return live(key, now());
    },
    size() {
      sweep(now());
      return slots.size;
    },
    delete(key) {
      slots.delete(key);
    },
    entries() {
      const at = now();
      sweep(at);
      const out: Array<[string, number]> = [];
      for (let i = 0; i < used; i++) {
        const slot = (head + i) % capacity;
        if (current(slot)) out.push([keys[slot] as string, expiries[slot] as number]);
      }
      return out;
    },
    restore(saved) {
      const at = now();
      for (const [key, expiresAt] of saved) {
        if (expiresAt <= at || slots.has(key)) continue;
        // Never longer than the TTL from now: a clock moved back must not make an id live for days.
        append(key, Math.min(expiresAt, at + ttlMs));
      }
    },
  };
}

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
  /** The system clock: what the expiries `entries` gives and `restore` takes are read against. */
  now: () => number;
  /**
   * The clock the TTL runs on while the process does (default `now`): one that is never set
   * (`Clock.elapsed`), so a step of the system clock neither forgets the ids seen before it nor keeps
   * them for the hours of the step.
   */
  elapsed?: () => number;
}

/**
 * A Map from key to its position in a ring of (key, expiry) pairs kept in insertion order, which is also
 * expiry order. Expired entries are swept from the ring's head and the oldest is dropped at
 * `maxEntries`: every operation is amortized O(1). Three traps avoided, all measured under load:
 * - deleting from the front of a V8 `Map` and iterating it from the front again walks every deleted
 *   slot until the table rehashes (~100 µs per request once 100 000 ids are stored);
 * - an object per entry (plus a boxed expiry) is two more old-generation objects per request for the
 *   garbage collector; the ring stores keys in one array and expiries in one `Float64Array`;
 * - the Map holds a position that never changes (a sequence number; its slot is the number modulo the
 *   ring's capacity), so growing the ring copies two arrays and leaves the Map alone: rebuilding a Map of
 *   65,000 keys held a request for ~25 ms.
 * A position whose key was deleted or re-added no longer matches `positions.get(key)` and is skipped.
 */
export function createSeenCache(options: SeenCacheOptions): SeenCache {
  const { ttlMs, now } = options;
  const tick = options.elapsed ?? now;
  const maxEntries = Math.max(1, Math.floor(options.maxEntries));
  const positions = new Map<string, number>();
  // Room for every live entry plus as many stale ones; compacted when full (only after many deletes).
  const maxCapacity = 2 * maxEntries;
  let capacity = Math.min(maxCapacity, 1024);
  let keys: (string | undefined)[] = new Array(capacity);
  let expiries = new Float64Array(capacity);
  /** The positions in the ring run from `head` (the oldest) to `tail` (exclusive). */
  let head = 0;
  let tail = 0;

  const slot = (position: number) => position % capacity;
  const current = (position: number) => {
    const key = keys[slot(position)];
    return key !== undefined && positions.get(key) === position;
  };

  function dropHead(): void {
    const at = slot(head);
    const key = keys[at];
    if (key !== undefined && positions.get(key) === head) positions.delete(key);
    keys[at] = undefined;
    head += 1;
  }

  /** The same positions in a ring of `size` slots. */
  function resize(size: number): void {
    const nextKeys: (string | undefined)[] = new Array(size);
    const nextExpiries = new Float64Array(size);
    for (let position = head; position < tail; position++) {
      nextKeys[position % size] = keys[slot(position)];
      nextExpiries[position % size] = expiries[slot(position)] as number;
    }
    keys = nextKeys;
    expiries = nextExpiries;
    capacity = size;
  }

  /** Rebuilds the ring with only current entries, numbered anew (the ring is full of deleted ones). */
  function compact(): void {
    const liveKeys: string[] = [];
    const liveExpiries: number[] = [];
    for (let position = head; position < tail; position++) {
      if (current(position)) {
        liveKeys.push(keys[slot(position)] as string);
        liveExpiries.push(expiries[slot(position)] as number);
      }
    }
    keys = new Array(capacity);
    expiries = new Float64Array(capacity);
    positions.clear();
    for (let i = 0; i < liveKeys.length; i++) {
      keys[i] = liveKeys[i];
      expiries[i] = liveExpiries[i] as number;
      positions.set(liveKeys[i] as string, i);
    }
    head = 0;
    tail = liveKeys.length;
  }

  /** Adds `key` at the ring's tail (expiries only grow along the ring), evicting the oldest at the cap. */
  function append(key: string, expiresAt: number): void {
    while (positions.size >= maxEntries && tail > head) dropHead();
    if (tail - head === capacity) {
      if (capacity < maxCapacity && positions.size * 2 > capacity)
        resize(Math.min(2 * capacity, maxCapacity));
      else compact();
    }
    keys[slot(tail)] = key;
    expiries[slot(tail)] = expiresAt;
    positions.set(key, tail);
    tail += 1;
  }

  function sweep(at: number): void {
    while (tail > head && (expiries[slot(head)] as number) <= at) dropHead();
  }

  function live(key: string, at: number): boolean {
    const position = positions.get(key);
    return position !== undefined && (expiries[slot(position)] as number) > at;
  }

  return {
    checkAndAdd(key) {
      const at = tick();
      sweep(at);
      const found = positions.get(key);
      if (found !== undefined) {
        if ((expiries[slot(found)] as number) > at) return true;
        positions.delete(key);
      }
      append(key, at + ttlMs);
      return false;
    },
    has(key) {
      return live(key, tick());
    },
    size() {
      sweep(tick());
      return positions.size;
    },
    delete(key) {
      positions.delete(key);
    },
    entries() {
      const at = tick();
      sweep(at);
      // Saved as times on the system clock, which a later process reads them against.
      const toWall = now() - at;
      const out: Array<[string, number]> = [];
      for (let position = head; position < tail; position++) {
        if (current(position))
          out.push([keys[slot(position)] as string, (expiries[slot(position)] as number) + toWall]);
      }
      return out;
    },
    restore(saved) {
      const wall = now();
      const at = tick();
      for (const [key, expiresAt] of saved) {
        if (expiresAt <= wall || positions.has(key)) continue;
        // Never longer than the TTL from now: a clock moved back must not make an id live for days.
        append(key, at + Math.min(expiresAt - wall, ttlMs));
      }
    },
  };
}

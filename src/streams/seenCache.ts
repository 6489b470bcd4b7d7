import { KeyIndex } from "./keyIndex.js";
import { KeySlab, keyCode } from "./keySlab.js";

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
  /** Bytes the keys' text takes, off the heap (gaps at the end of its array included). */
  keyBytes(): number;
  /** How many keys were evicted at the cap before their hour was up (a retry of one is no duplicate). */
  forgotten(): number;
  /** What the local journal recorded of the same keys, kept in the same entries (see `JournaledKeys`). */
  readonly journaled: JournaledKeys;
}

/**
 * The journal's record of idempotency keys (`state.backend: local`): per key, the time it was first
 * accepted (system clock) and what the journal said of it (`flags`, its own bits). The journal's live
 * mirror keeps these in the pipeline's cache once the gateway runs, so each accepted key is held once: a
 * second map of 100,000 keys was the heap's other largest object, and each replacement of its hash table
 * was garbage only a major collection took back.
 */
export interface JournaledKeys {
  /**
   * A record says `key` was accepted at `at` with `flags`: within the key's hour its first time is kept
   * and the flags are added; a key taken again past its hour starts anew.
   */
  note(key: string, at: number, flags: number): void;
  delete(key: string): void;
  /** Drops keys older than the hour (and past the cap). */
  prune(now: number): void;
  /** Keys whose time is ahead of `now` (the clock set back while the gateway was down) count from `now`. */
  notAhead(now: number): void;
  /**
   * The keys recorded and within the hour at `now`, oldest first. Read lazily, each only as far as the
   * keys went when it began: keys added meanwhile are in the records journaled after it began.
   */
  list(now: number): Generator<[key: string, at: number, flags: number]>;
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
  /** Called each time a key still within its hour is evicted to stay within `maxEntries`. */
  onForgotten?: () => void;
}

/** How many of `sorted` (ascending) are below `value`: a position's number after the compaction. */
function keptBefore(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The bit of an entry's marks that says the journal recorded it; the journal's own flags are the bits below. */
const JOURNALED = 0x80;
/** The bit of an entry's marks that says it is current: the index finds its key at its position. */
const CURRENT = 0x40;

/**
 * An index from key to its position in a ring of entries kept in insertion order, which is also expiry order.
 * Expired entries are swept from the ring's head and the oldest is dropped at `maxEntries`: every operation is
 * amortized O(1). Five traps avoided, all measured under load:
 * - deleting from the front of a V8 `Map` and iterating it from the front again walks every deleted
 *   slot until the table rehashes (~100 µs per request once 100 000 ids are stored);
 * - an object per entry (plus a boxed expiry) is two more old-generation objects per request for the
 *   garbage collector; the ring keeps each field of its entries in one typed array;
 * - the index holds a position that never changes (a sequence number; its slot is the number modulo the
 *   ring's capacity), so growing the ring copies its arrays and leaves the index alone: rebuilding a Map of
 *   65,000 keys held a request for ~25 ms;
 * - the index is a `KeyIndex`, not a `Map`: with one key in and one out per request a `Map` replaced its
 *   7 MB hash table every ~160,000 requests, garbage only a major collection took back;
 * - the keys' text is in a `KeySlab`, bytes off the heap, not strings: each key kept as a string reached the
 *   old generation and, once dropped, stayed there until a major collection.
 * A position whose key was deleted or re-added is no longer `CURRENT` and is skipped.
 */
export function createSeenCache(options: SeenCacheOptions): SeenCache {
  const { ttlMs, now } = options;
  const tick = options.elapsed ?? now;
  const maxEntries = Math.max(1, Math.floor(options.maxEntries));
  const slab = new KeySlab();
  // Room for every live entry plus as many stale ones; compacted when full (only after many deletes).
  const maxCapacity = 2 * maxEntries;
  let capacity = Math.min(maxCapacity, 1024);
  /** Each entry's key: where its text starts in the slab, its code there, and its hash in the index. */
  let starts = new Float64Array(capacity);
  let codes = new Uint32Array(capacity);
  let hashes = new Int32Array(capacity);
  let expiries = new Float64Array(capacity);
  /** The journal's side (`JournaledKeys`): its time (system clock) and flags; JOURNALED marks a key it recorded. */
  let journalAts = new Float64Array(capacity);
  let marks = new Uint8Array(capacity);
  /**
   * Compactions number the positions anew: a `list` under way maps its place through the last one's old
   * positions of the entries kept (ascending), and starts again from the head after two or more.
   */
  let compactions = 0;
  let renumbered = new Float64Array(0);
  /** The positions in the ring run from `head` (the oldest) to `tail` (exclusive). */
  let head = 0;
  let tail = 0;
  let forgotten = 0;

  const slot = (position: number) => position % capacity;
  const positions = new KeyIndex((position, key) =>
    slab.equals(starts[slot(position)] as number, codes[slot(position)] as number, key),
  );
  const current = (position: number) => ((marks[slot(position)] as number) & CURRENT) !== 0;
  const keyAt = (at: number) => slab.read(starts[at] as number, codes[at] as number);

  function dropHead(): void {
    const at = slot(head);
    if (((marks[at] as number) & CURRENT) !== 0) positions.removeValue(hashes[at] as number, head);
    marks[at] = 0;
    head += 1;
    if (head < tail) slab.releaseTo(starts[slot(head)] as number);
    else slab.clear();
  }

  /** New arrays of `size` slots for the ring, holding the entry at position `moved[i]` in slot `slotOf(i)`. */
  function reslot(size: number, moved: readonly number[], slotOf: (i: number) => number): void {
    const nextStarts = new Float64Array(size);
    const nextCodes = new Uint32Array(size);
    const nextHashes = new Int32Array(size);
    const nextExpiries = new Float64Array(size);
    const nextAts = new Float64Array(size);
    const nextMarks = new Uint8Array(size);
    for (let i = 0; i < moved.length; i++) {
      const from = slot(moved[i] as number);
      const to = slotOf(i);
      nextStarts[to] = starts[from] as number;
      nextCodes[to] = codes[from] as number;
      nextHashes[to] = hashes[from] as number;
      nextExpiries[to] = expiries[from] as number;
      nextAts[to] = journalAts[from] as number;
      nextMarks[to] = marks[from] as number;
    }
    starts = nextStarts;
    codes = nextCodes;
    hashes = nextHashes;
    expiries = nextExpiries;
    journalAts = nextAts;
    marks = nextMarks;
    capacity = size;
  }

  /** The same positions in a ring of `size` slots. */
  function resize(size: number): void {
    const all: number[] = [];
    for (let position = head; position < tail; position++) all.push(position);
    reslot(size, all, (i) => (all[i] as number) % size);
  }

  /** Rebuilds the ring with only current entries, numbered anew (the ring is full of deleted ones). */
  function compact(): void {
    const kept: number[] = [];
    for (let position = head; position < tail; position++) if (current(position)) kept.push(position);
    reslot(capacity, kept, (i) => i);
    positions.clear();
    for (let i = 0; i < kept.length; i++) positions.add(hashes[i] as number, i);
    head = 0;
    tail = kept.length;
    compactions += 1;
    renumbered = Float64Array.from(kept);
  }

  /** Adds `key` at the ring's tail (expiries only grow along the ring), evicting the oldest at the cap. */
  function append(key: string, expiresAt: number): void {
    while (positions.size >= maxEntries && tail > head) {
      if (current(head)) {
        forgotten += 1;
        options.onForgotten?.();
      }
      dropHead();
    }
    if (tail - head === capacity) {
      if (capacity < maxCapacity && positions.size * 2 > capacity)
        resize(Math.min(2 * capacity, maxCapacity));
      else compact();
    }
    const to = slot(tail);
    const code = keyCode(key);
    starts[to] = slab.append(key, code);
    codes[to] = code;
    hashes[to] = positions.hash(key);
    expiries[to] = expiresAt;
    marks[to] = CURRENT;
    positions.add(hashes[to] as number, tail);
    tail += 1;
  }

  function sweep(at: number): void {
    while (tail > head && (expiries[slot(head)] as number) <= at) dropHead();
  }

  function live(key: string, at: number): boolean {
    const position = positions.get(key);
    return position !== undefined && (expiries[slot(position)] as number) > at;
  }

  /** Forgets `key` on both sides (the pipeline's and the journal's). */
  const forget = (key: string) => {
    const position = positions.get(key);
    if (position === undefined) return;
    positions.delete(key);
    marks[slot(position)] = 0;
  };

  /** The entry at `position` is current and the journal recorded it. */
  const journaledAt = (position: number) =>
    current(position) && ((marks[slot(position)] as number) & JOURNALED) !== 0;

  const journaled: JournaledKeys = {
    note(key, at, flags) {
      const ticks = tick();
      sweep(ticks);
      const position = positions.get(key);
      if (position !== undefined && (expiries[slot(position)] as number) > ticks) {
        const found = slot(position);
        const mark = marks[found] as number;
        if ((mark & JOURNALED) === 0 || at >= (journalAts[found] as number) + ttlMs) {
          journalAts[found] = at;
          marks[found] = CURRENT | JOURNALED | flags;
        } else marks[found] = mark | flags;
        return;
      }
      if (position !== undefined) forget(key);
      // A key the cache does not hold (an event without a delivery id gets a random one; a key replayed at
      // start): kept for the rest of its hour, as `restore` keeps a saved key.
      const left = Math.min(at + ttlMs - now(), ttlMs);
      if (left <= 0) return;
      append(key, ticks + left);
      const added = slot(tail - 1);
      journalAts[added] = at;
      marks[added] = CURRENT | JOURNALED | flags;
    },
    delete: forget,
    prune() {
      sweep(tick());
    },
    notAhead(at) {
      for (let position = head; position < tail; position++)
        if (journaledAt(position) && (journalAts[slot(position)] as number) > at)
          journalAts[slot(position)] = at;
    },
    *list(at) {
      let end = tail;
      let read = compactions;
      let position = head;
      for (;;) {
        if (compactions !== read) {
          if (compactions === read + 1) {
            position = keptBefore(renumbered, position);
            end = keptBefore(renumbered, end);
          } else {
            // Renumbered twice: read again from the head (a key restated twice is harmless).
            position = head;
            end = tail;
          }
          read = compactions;
        }
        if (position < head) position = head;
        if (position >= end) return;
        const from = slot(position);
        position += 1;
        if (journaledAt(position - 1) && (journalAts[from] as number) > at - ttlMs)
          yield [keyAt(from), journalAts[from] as number, (marks[from] as number) & ~(JOURNALED | CURRENT)];
      }
    },
  };

  return {
    journaled,
    checkAndAdd(key) {
      const at = tick();
      sweep(at);
      const found = positions.get(key);
      if (found !== undefined) {
        if ((expiries[slot(found)] as number) > at) return true;
        forget(key);
      }
      append(key, at + ttlMs);
      return false;
    },
    has(key) {
      return live(key, tick());
    },
    forgotten: () => forgotten,
    size() {
      sweep(tick());
      return positions.size;
    },
    delete: forget,
    keyBytes: () => slab.used,
    entries() {
      const at = tick();
      sweep(at);
      // Saved as times on the system clock, which a later process reads them against.
      const toWall = now() - at;
      const out: Array<[string, number]> = [];
      for (let position = head; position < tail; position++) {
        if (current(position))
          out.push([keyAt(slot(position)), (expiries[slot(position)] as number) + toWall]);
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

import { KeyIndex } from "./keyIndex.js";

/**
 * Collections for entries added and removed at the rate of requests while only a few are held at once (the
 * runs under way), without V8's `Map` and `Set`. When one of those fills with removed entries, V8 copies it
 * into a new table and leaves in the old one its entries and a link to the new table (for iterators still
 * walking the old one). Once a major collection has moved a table to the old generation, that table, dead,
 * keeps the next one alive at every scavenge, which keeps the next, and each of them the entries it held: from
 * the gateway's first major collection on, every accepted request's run, event and record reached the old
 * generation (~275 KB per scavenge at ~15,000 requests/s against ~25 KB before it), and a major collection
 * followed every 1–3 s (bench/README.md). Arrays and V8's other hash tables (an object's properties, a
 * `WeakMap`) are copied without such a link.
 *
 * ChurnSet and ChurnMap keep insertion order. An iteration visits once each entry held when it began and still
 * held when it gets there (with the value it has then); an entry added meanwhile may or may not be visited.
 */

/** Holes (removed entries) past this many, and past the live ones, are squeezed out of the entry array. */
const COMPACT_AT = 64;
const squeezeDue = (length: number, held: number) => length - held > Math.max(COMPACT_AT, held);

/** Objects in insertion order, found by identity (a `WeakMap` holds each one's place in the array). */
export class ChurnSet<T extends object> implements Iterable<T> {
  private items: (T | undefined)[] = [];
  private readonly at = new WeakMap<T, number>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(item: T): boolean {
    return this.at.has(item);
  }

  add(item: T): this {
    if (this.at.has(item)) return this;
    this.at.set(item, this.items.length);
    this.items.push(item);
    this.count += 1;
    return this;
  }

  delete(item: T): boolean {
    const place = this.at.get(item);
    if (place === undefined) return false;
    this.at.delete(item);
    this.items[place] = undefined;
    this.count -= 1;
    this.squeeze();
    return true;
  }

  *[Symbol.iterator](): Iterator<T> {
    // The array is replaced when squeezed: an iteration under way goes on over the one it began with, which
    // still names every entry held then (one removed since is skipped).
    const items = this.items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item !== undefined && this.at.has(item)) yield item;
    }
  }

  private squeeze(): void {
    if (this.count === 0) this.items = [];
    else if (squeezeDue(this.items.length, this.count)) {
      const kept: T[] = [];
      for (const item of this.items) if (item !== undefined) kept.push(item);
      for (let i = 0; i < kept.length; i++) this.at.set(kept[i] as T, i);
      this.items = kept;
    }
  }
}

/**
 * String keys to values in insertion order; a `KeyIndex` holds each key's place. A dictionary object did
 * before: V8 internalizes each property name it takes, a copy of the key in the old generation that only a
 * major collection takes back (~30 bytes for every accepted request's run, bench/README.md); a `Map` of
 * places, whose old tables link but hold no values, left the gateway promoting 2–2.5× as much (its tables
 * themselves, ~470 a second at ~15,000 requests/s).
 */
export class ChurnMap<V> implements Iterable<[string, V]> {
  private keyList: (string | undefined)[] = [];
  private valueList: (V | undefined)[] = [];
  private readonly places = new KeyIndex((place, key) => this.keyList[place] === key);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.places.has(key);
  }

  get(key: string): V | undefined {
    const place = this.places.get(key);
    return place === undefined ? undefined : this.valueList[place];
  }

  /** A key already held keeps its place and takes the new value (as a `Map`'s does). */
  set(key: string, value: V): this {
    const place = this.places.get(key);
    if (place !== undefined) {
      this.valueList[place] = value;
      return this;
    }
    this.places.add(this.places.hash(key), this.keyList.length);
    this.keyList.push(key);
    this.valueList.push(value);
    this.count += 1;
    return this;
  }

  delete(key: string): boolean {
    const place = this.places.get(key);
    if (place === undefined) return false;
    this.places.delete(key);
    this.keyList[place] = undefined;
    this.valueList[place] = undefined;
    this.count -= 1;
    this.squeeze();
    return true;
  }

  *keys(): Generator<string> {
    for (const [key] of this) yield key;
  }

  *values(): Generator<V> {
    for (const [, value] of this) yield value;
  }

  *[Symbol.iterator](): Iterator<[string, V]> {
    const keys = this.keyList;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key === undefined) continue;
      // Read by key: the entry may have moved (squeezed) or been removed since the iteration began.
      const place = this.places.get(key);
      if (place !== undefined) yield [key, this.valueList[place] as V];
    }
  }

  private squeeze(): void {
    if (this.count === 0) {
      this.keyList = [];
      this.valueList = [];
    } else if (squeezeDue(this.keyList.length, this.count)) {
      const keys: string[] = [];
      const values: V[] = [];
      // Each key is pointed at its new place while the old list still says where it was (`sameKey` reads it):
      // a place given so far is below every old place not yet moved, so no lookup takes one key for another.
      // No clear and refill of the index: after a burst it may be large while few runs are held.
      for (let i = 0; i < this.keyList.length; i++) {
        const key = this.keyList[i];
        if (key === undefined) continue;
        this.places.set(key, keys.length);
        keys.push(key);
        values.push(this.valueList[i] as V);
      }
      this.keyList = keys;
      this.valueList = values;
    }
  }
}

/** How far a window's front may move before the slots behind it are dropped (when at most as many are left). */
const WINDOW_COMPACT_AT = 1024;

/**
 * Values under whole-number ids given mostly in increasing order (a request's number on its thread), in an
 * array from the oldest id still held to the newest: no hash at all. Ids between are empty slots, so one id held
 * long (a request answered late) keeps the slots of every id given since; they go once it is removed.
 */
export class IdWindow<V> {
  private slots: (V | undefined)[] = [];
  /** The id of `slots[head]`; the slots before `head` are spent. */
  private first = 0;
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    const at = id - this.first;
    return at < 0 ? undefined : this.slots[this.head + at];
  }

  /** `value` must not be undefined. An id older than the oldest held is taken too, by moving the front back. */
  set(id: number, value: V): this {
    if (this.count === 0) {
      this.clear();
      this.first = id;
    } else if (id < this.first) this.reachBackTo(id);
    const at = this.head + (id - this.first);
    while (this.slots.length < at) this.slots.push(undefined);
    if (this.slots[at] === undefined) this.count += 1;
    this.slots[at] = value;
    return this;
  }

  delete(id: number): boolean {
    const at = this.head + (id - this.first);
    if (at < this.head || this.slots[at] === undefined) return false;
    this.slots[at] = undefined;
    this.count -= 1;
    if (this.count === 0) this.clear();
    else if (at === this.head) this.dropSpent();
    return true;
  }

  /** Moves the front past the empty slots at it, copying what is left to the start now and then. */
  private dropSpent(): void {
    const { slots } = this;
    while (this.head < slots.length && slots[this.head] === undefined) {
      this.head += 1;
      this.first += 1;
    }
    if (this.head >= WINDOW_COMPACT_AT && this.head * 2 >= slots.length) {
      slots.copyWithin(0, this.head);
      slots.length -= this.head;
      this.head = 0;
    }
  }

  private reachBackTo(id: number): void {
    const back = this.first - id;
    if (back > this.head) {
      this.slots = new Array<V | undefined>(back - this.head).fill(undefined).concat(this.slots);
      this.head = back;
    }
    this.head -= back;
    this.first = id;
  }

  /** Holds nothing: the next id set starts the window. */
  clear(): void {
    this.slots = [];
    this.head = 0;
    this.count = 0;
  }
}

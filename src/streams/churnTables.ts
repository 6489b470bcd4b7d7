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
 * Both keep insertion order. An iteration visits once each entry held when it began and still held when it
 * gets there (with the value it has then); an entry added meanwhile may or may not be visited.
 */

/** Holes (removed entries) past this many, and past the live ones, are squeezed out of the entry array. */
const COMPACT_AT = 64;

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
    const holes = this.items.length - this.count;
    if (this.count === 0) this.items = [];
    else if (holes > COMPACT_AT && holes > this.count) {
      const kept: T[] = [];
      for (const item of this.items) if (item !== undefined) kept.push(item);
      for (let i = 0; i < kept.length; i++) this.at.set(kept[i] as T, i);
      this.items = kept;
    }
  }
}

/**
 * String keys to values in insertion order; a dictionary object (no prototype) holds each key's place. V8
 * copies each key it takes to the old generation (property names are internalized) and a set and delete cost
 * ~1 µs against a `Map`'s ~0.25 µs; a `Map` of places instead, whose old tables link but hold no values, left
 * the gateway promoting 2–2.5× as much (its tables themselves, ~470 a second at ~15,000 requests/s).
 */
export class ChurnMap<V> implements Iterable<[string, V]> {
  private keyList: (string | undefined)[] = [];
  private valueList: (V | undefined)[] = [];
  private places: Record<string, number> = Object.create(null);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.places[key] !== undefined;
  }

  get(key: string): V | undefined {
    const place = this.places[key];
    return place === undefined ? undefined : this.valueList[place];
  }

  /** A key already held keeps its place and takes the new value (as a `Map`'s does). */
  set(key: string, value: V): this {
    const place = this.places[key];
    if (place !== undefined) {
      this.valueList[place] = value;
      return this;
    }
    this.places[key] = this.keyList.length;
    this.keyList.push(key);
    this.valueList.push(value);
    this.count += 1;
    return this;
  }

  delete(key: string): boolean {
    const place = this.places[key];
    if (place === undefined) return false;
    delete this.places[key];
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
      const place = this.places[key];
      if (place !== undefined) yield [key, this.valueList[place] as V];
    }
  }

  private squeeze(): void {
    const holes = this.keyList.length - this.count;
    if (this.count === 0) {
      this.keyList = [];
      this.valueList = [];
      // A fresh dictionary: deleting leaves the old one's table at its largest size.
      this.places = Object.create(null);
    } else if (holes > COMPACT_AT && holes > this.count) {
      const keys: string[] = [];
      const values: V[] = [];
      for (let i = 0; i < this.keyList.length; i++) {
        const key = this.keyList[i];
        if (key === undefined) continue;
        this.places[key] = keys.length;
        keys.push(key);
        values.push(this.valueList[i] as V);
      }
      this.keyList = keys;
      this.valueList = values;
    }
  }
}

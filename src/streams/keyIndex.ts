import { randomBytes } from "node:crypto";

/** Slots start at this many and double while more than 40 % of them are taken (never shrink). */
const FIRST_SLOTS = 1024;
const MAX_LOAD = 0.4;
/** A free slot's value (values are positions or places: never negative). */
const FREE = -1;

/**
 * A string's hash under a seed drawn per process (FNV-1a over its UTF-16 code units, then MurmurHash3's
 * finalizer): keys come from senders, who should not be able to line them up on one probe chain.
 */
function hashOf(key: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * An index from string keys to whole numbers (a key's place in its owner's arrays) for a table that sees one
 * key added and one removed per request, kept in typed arrays that, once grown, are never replaced: open
 * addressing with linear probing, and removal by shifting the rest of a probe chain back (no tombstones, so no
 * rebuild to clear them). A V8 `Map` that churns so replaces its whole hash table each time it fills with
 * removed entries, a large object (7 MB at 100,000 keys) that only a major collection takes back.
 *
 * The index holds no key: its owner keeps them where it likes (as strings, or as bytes off the heap) and says,
 * through `sameKey`, whether the entry at a number is a key.
 */
export class KeyIndex {
  private readonly seed = randomBytes(4).readInt32LE(0);
  private values: Float64Array;
  private hashes: Int32Array;
  private mask: number;
  private count = 0;
  /** The last key hashed and its hash: a request looks its key up, adds it and marks it, one string each time. */
  private lastKey = "";
  private lastHash = hashOf("", this.seed);

  /** `sameKey(value, key)`: the entry the owner keeps at `value` is `key`. */
  constructor(private readonly sameKey: (value: number, key: string) => boolean) {
    this.values = new Float64Array(FIRST_SLOTS).fill(FREE);
    this.hashes = new Int32Array(FIRST_SLOTS);
    this.mask = FIRST_SLOTS - 1;
  }

  get size(): number {
    return this.count;
  }

  /** `key`'s hash, as `add` and `removeValue` take it. */
  hash(key: string): number {
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.lastHash = hashOf(key, this.seed);
    }
    return this.lastHash;
  }

  /** The slot holding `key`, or -1. */
  private find(key: string, hash: number): number {
    const { values, hashes, mask } = this;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const value = values[at] as number;
      if (value === FREE) return -1;
      if (hashes[at] === hash && this.sameKey(value, key)) return at;
    }
  }

  get(key: string): number | undefined {
    const at = this.find(key, this.hash(key));
    return at < 0 ? undefined : (this.values[at] as number);
  }

  has(key: string): boolean {
    return this.find(key, this.hash(key)) >= 0;
  }

  /** Points `key` at `value` (≥ 0), which the owner keeps it at from now on. */
  set(key: string, value: number): void {
    const hash = this.hash(key);
    const found = this.find(key, hash);
    if (found >= 0) this.values[found] = value;
    else this.add(hash, value);
  }

  /** Adds an entry the index does not hold (`hash` from `hash(key)`): at a rebuild, or after a `get` that missed. */
  add(hash: number, value: number): void {
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    this.place(hash, value);
    this.count += 1;
  }

  delete(key: string): boolean {
    const at = this.find(key, this.hash(key));
    if (at < 0) return false;
    this.free(at);
    return true;
  }

  /** Removes the entry at `value` whose key hashed to `hash`, when the owner no longer has the key's text at hand. */
  removeValue(hash: number, value: number): boolean {
    const { values, mask } = this;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const held = values[at] as number;
      if (held === FREE) return false;
      if (held === value) {
        this.free(at);
        return true;
      }
    }
  }

  clear(): void {
    this.values.fill(FREE);
    this.count = 0;
  }

  /** Empties slot `at`: each later entry of the chain whose home slot does not lie between the gap and itself moves into the gap. */
  private free(at: number): void {
    const { values, hashes, mask } = this;
    let gap = at;
    for (let next = (gap + 1) & mask; values[next] !== FREE; next = (next + 1) & mask) {
      const home = (hashes[next] as number) & mask;
      if (((next - home) & mask) >= ((next - gap) & mask)) {
        values[gap] = values[next] as number;
        hashes[gap] = hashes[next] as number;
        gap = next;
      }
    }
    values[gap] = FREE;
    this.count -= 1;
  }

  private place(hash: number, value: number): void {
    const { values, mask } = this;
    let at = hash & mask;
    while (values[at] !== FREE) at = (at + 1) & mask;
    values[at] = value;
    this.hashes[at] = hash;
  }

  private grow(): void {
    const { values, hashes } = this;
    const slots = 2 * values.length;
    this.values = new Float64Array(slots).fill(FREE);
    this.hashes = new Int32Array(slots);
    this.mask = slots - 1;
    for (let at = 0; at < values.length; at++) {
      const value = values[at] as number;
      if (value !== FREE) this.place(hashes[at] as number, value);
    }
  }
}

import { randomBytes } from "node:crypto";

/** Slots start at this many and double while more than 40 % of them are taken (never shrink). */
const FIRST_SLOTS = 1024;
const MAX_LOAD = 0.4;

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
 * A map from string keys to numbers for a table that sees one key added and one removed per request, kept
 * in arrays that, once grown, are never replaced: open addressing with linear probing, and removal by
 * shifting the rest of a probe chain back (no tombstones, so no rebuild to clear them). A V8 `Map` that
 * churns so replaces its whole hash table each time it fills with removed entries, a large object (7 MB at
 * 100,000 keys) that only a major collection takes back: most of the heap's swing under steady load.
 */
export class KeyIndex {
  private readonly seed = randomBytes(4).readInt32LE(0);
  private keys: (string | undefined)[];
  private values: Float64Array;
  private hashes: Int32Array;
  private mask: number;
  private count = 0;
  /** The last key hashed and its hash: a request looks its key up, adds it and marks it, one string each time. */
  private lastKey = "";
  private lastHash = hashOf("", this.seed);

  constructor() {
    this.keys = new Array(FIRST_SLOTS);
    this.values = new Float64Array(FIRST_SLOTS);
    this.hashes = new Int32Array(FIRST_SLOTS);
    this.mask = FIRST_SLOTS - 1;
  }

  get size(): number {
    return this.count;
  }

  private hash(key: string): number {
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.lastHash = hashOf(key, this.seed);
    }
    return this.lastHash;
  }

  /** The slot holding `key`, or -1. */
  private find(key: string, hash: number): number {
    const { keys, hashes, mask } = this;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const held = keys[at];
      if (held === undefined) return -1;
      if (hashes[at] === hash && held === key) return at;
    }
  }

  get(key: string): number | undefined {
    const at = this.find(key, this.hash(key));
    return at < 0 ? undefined : (this.values[at] as number);
  }

  has(key: string): boolean {
    return this.find(key, this.hash(key)) >= 0;
  }

  set(key: string, value: number): void {
    const hash = this.hash(key);
    const found = this.find(key, hash);
    if (found >= 0) {
      this.values[found] = value;
      return;
    }
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    this.place(key, value, hash);
    this.count += 1;
  }

  delete(key: string): boolean {
    let at = this.find(key, this.hash(key));
    if (at < 0) return false;
    const { keys, values, hashes, mask } = this;
    // Each later entry of the chain whose home slot does not lie between the gap and itself moves into the gap.
    for (let next = (at + 1) & mask; keys[next] !== undefined; next = (next + 1) & mask) {
      const home = (hashes[next] as number) & mask;
      if (((next - home) & mask) >= ((next - at) & mask)) {
        keys[at] = keys[next];
        values[at] = values[next] as number;
        hashes[at] = hashes[next] as number;
        at = next;
      }
    }
    keys[at] = undefined;
    this.count -= 1;
    return true;
  }

  clear(): void {
    this.keys.fill(undefined);
    this.count = 0;
  }

  private place(key: string, value: number, hash: number): void {
    const { keys, mask } = this;
    let at = hash & mask;
    while (keys[at] !== undefined) at = (at + 1) & mask;
    keys[at] = key;
    this.values[at] = value;
    this.hashes[at] = hash;
  }

  private grow(): void {
    const { keys, values, hashes } = this;
    const slots = 2 * keys.length;
    this.keys = new Array(slots);
    this.values = new Float64Array(slots);
    this.hashes = new Int32Array(slots);
    this.mask = slots - 1;
    for (let at = 0; at < keys.length; at++) {
      const key = keys[at];
      if (key !== undefined) this.place(key, values[at] as number, hashes[at] as number);
    }
  }
}

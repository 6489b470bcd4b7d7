/** Bytes a slab starts with; it doubles when a key would not fit. */
const FIRST_BYTES = 16 * 1024;

/**
 * The text of keys kept in insertion order and let go oldest first, as bytes in one array used as a ring, off
 * V8's heap: a key kept for its hour as a string of its own is an old-generation object (two with the string it
 * was built from) that, once let go, stays until a major collection; at one key in and one out per request that
 * was most of what the gateway's old generation gained between collections (bench/README.md).
 *
 * A key is addressed by where it starts (an offset that only grows; its byte is at the offset modulo the
 * array's length) and its code: its length times two, plus one when it is written in two bytes per UTF-16 code
 * unit (a key with a unit past U+00FF) instead of one. A key never wraps around the array's end.
 */
export class KeySlab {
  private bytes = new Uint8Array(FIRST_BYTES);
  /** Offsets of the oldest byte held and just past the newest. */
  private head = 0;
  private tail = 0;

  /** Bytes held, the gap a key skipped at the array's end included. */
  get used(): number {
    return this.tail - this.head;
  }

  /** Writes `key`, whose code is `code` (`keyCode(key)`), after the newest key; returns where it starts. */
  append(key: string, code: number): number {
    const wide = (code & 1) === 1;
    const size = keyBytes(code);
    let start = this.startFor(size);
    while (start + size - this.head > this.bytes.length) {
      this.regrow(2 * this.bytes.length);
      start = this.startFor(size);
    }
    const bytes = this.bytes;
    const at = start % bytes.length;
    if (wide) {
      for (let i = 0; i < key.length; i++) {
        const unit = key.charCodeAt(i);
        bytes[at + 2 * i] = unit & 0xff;
        bytes[at + 2 * i + 1] = unit >>> 8;
      }
    } else for (let i = 0; i < key.length; i++) bytes[at + i] = key.charCodeAt(i);
    this.tail = start + size;
    return start;
  }

  /** The key at `start` with `code` is `key`. */
  equals(start: number, code: number, key: string): boolean {
    if (code >>> 1 !== key.length) return false;
    const bytes = this.bytes;
    const at = start % bytes.length;
    if ((code & 1) === 0) {
      for (let i = 0; i < key.length; i++) if (bytes[at + i] !== key.charCodeAt(i)) return false;
      return true;
    }
    for (let i = 0; i < key.length; i++)
      if ((bytes[at + 2 * i] as number) + 256 * (bytes[at + 2 * i + 1] as number) !== key.charCodeAt(i))
        return false;
    return true;
  }

  /** The key at `start` with `code`, as a string (a snapshot's or a listing's; the hot path only compares). */
  read(start: number, code: number): string {
    const at = start % this.bytes.length;
    const view = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + at, keyBytes(code));
    return view.toString((code & 1) === 0 ? "latin1" : "utf16le");
  }

  /** Lets go of every byte before `start` (the oldest key kept from now on starts there). */
  releaseTo(start: number): void {
    this.head = Math.max(this.head, Math.min(start, this.tail));
  }

  /** Lets go of every key. */
  clear(): void {
    this.head = this.tail;
  }

  /** Where a key of `size` bytes goes: at the tail, or at the array's next start when it would wrap. */
  private startFor(size: number): number {
    const length = this.bytes.length;
    const at = this.tail % length;
    return at + size > length ? this.tail + (length - at) : this.tail;
  }

  /**
   * The held bytes in an array twice as long, each at its offset modulo the new length. The new length's
   * multiples are the old one's too, so a piece between two of the old ones stays whole, and no key wraps.
   */
  private regrow(length: number): void {
    const from = this.bytes;
    const to = new Uint8Array(length);
    for (let offset = this.head; offset < this.tail; ) {
      const at = offset % from.length;
      const end = Math.min(this.tail, offset + (from.length - at));
      to.set(from.subarray(at, at + (end - offset)), offset % length);
      offset = end;
    }
    this.bytes = to;
  }
}

/** The bytes a key with `code` takes. */
export function keyBytes(code: number): number {
  return (code & 1) === 0 ? code >>> 1 : code - 1;
}

/** `key`'s code: its length times two, plus one when some UTF-16 code unit of it does not fit one byte. */
export function keyCode(key: string): number {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0xff) return 2 * key.length + 1;
  return 2 * key.length;
}

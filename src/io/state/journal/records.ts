import { constants } from "node:buffer";
import { crc32 } from "node:zlib";

/**
 * The journal's framing: each record is `[u32 length][u32 CRC-32 of the body][body]` (little endian),
 * the body one JSON document. A torn tail (a crash in the middle of a write) or a flipped bit shows as a
 * length past the end or a CRC mismatch: reading stops there and reports where.
 */
export const HEADER_BYTES = 8;
/**
 * No record is this large: its body is one JSON text, a string of at most `MAX_STRING_LENGTH` UTF-16 code
 * units, each at most 3 bytes of UTF-8. A bigger length is corruption. (Not `max_body_bytes`: a prompt may
 * quote the whole payload, and the record escapes it once more.)
 */
export const MAX_RECORD_BYTES = 3 * constants.MAX_STRING_LENGTH;

/** Records of at most this many UTF-16 units have their CRC taken of their text (`RecordBuffer.addText`). */
const SHORT_TEXT = 16 * 1024;

/** One record (every append on the accepted path): no intermediate array, one allocation. */
export function encodeRecord(record: unknown): Buffer {
  const text = JSON.stringify(record);
  const out = Buffer.allocUnsafe(HEADER_BYTES + Buffer.byteLength(text, "utf8"));
  const length = out.write(text, HEADER_BYTES, "utf8");
  out.writeUInt32LE(length, 0);
  out.writeUInt32LE(crc32(out.subarray(HEADER_BYTES)), 4);
  return out;
}

/**
 * One flush's records, framed as they are appended into one growing buffer: no buffer per record and no
 * concatenation at flush (measured 5–15 % less CPU per record than `encodeRecord` + `Buffer.concat` for
 * flushes of 24–96 records, level for a one-event flush: `bench/README.md`). Each record is encoded when
 * added, so a later change to the object is not written.
 */
export class RecordBuffer {
  private buffer: Buffer | undefined;
  private used = 0;
  /** Records added so far. */
  count = 0;

  /**
   * `sizeHint`: the bytes the buffer starts with, when it is likely to need them (the group commit gives
   * its last batch's size): no growing copy after copy for a busy turn's batch.
   */
  constructor(private readonly sizeHint = 0) {}

  /** Bytes of the records added so far. */
  bytes(): number {
    return this.used;
  }

  add(record: unknown): void {
    this.addText(JSON.stringify(record));
  }

  /** A record already encoded as its JSON text (the state layer's hand-built hot records). */
  addText(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    const most = this.used + HEADER_BYTES + text.length * 3;
    let buffer = this.buffer;
    if (buffer === undefined || most > buffer.length) {
      // Starts small, from Node's buffer pool (a one-event flush allocates no ArrayBuffer of its own).
      const grown = Buffer.allocUnsafe(
        buffer === undefined ? Math.max(most, this.sizeHint, 1024) : Math.max(most, 2 * buffer.length),
      );
      buffer?.copy(grown, 0, 0, this.used);
      buffer = grown;
      this.buffer = grown;
    }
    const start = this.used + HEADER_BYTES;
    const length = buffer.write(text, start, "utf8");
    buffer.writeUInt32LE(length, this.used);
    // The CRC of the bytes just written. Of a short record's text: its UTF-8 is those bytes, and no Buffer
    // view is made per record to read them; a long one's is read in place (no copy of a large prompt).
    const crc = text.length <= SHORT_TEXT ? crc32(text) : crc32(buffer.subarray(start, start + length));
    buffer.writeUInt32LE(crc, this.used + 4);
    this.used = start + length;
    this.count += 1;
  }

  /** The framed records (a view: valid until the next `add`). */
  data(): Buffer {
    return this.buffer === undefined ? Buffer.alloc(0) : this.buffer.subarray(0, this.used);
  }
}

/** Several records framed into one buffer (a snapshot): one allocation, no copies. */
export function encodeRecords(records: readonly unknown[]): Buffer {
  const texts = records.map((record) => JSON.stringify(record));
  let total = 0;
  for (const text of texts) total += HEADER_BYTES + Buffer.byteLength(text, "utf8");
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  for (const text of texts) {
    const length = out.write(text, offset + HEADER_BYTES, "utf8");
    out.writeUInt32LE(length, offset);
    out.writeUInt32LE(crc32(out.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length)), offset + 4);
    offset += HEADER_BYTES + length;
  }
  return out;
}

/** Where and why reading a segment stopped before its end, or skipped a damaged stretch of it. */
export interface TornTail {
  readonly offset: number;
  readonly skippedBytes: number;
  readonly reason: "truncated header" | "truncated record" | "bad length" | "CRC mismatch" | "not JSON";
}

export interface DecodedSegment {
  readonly records: unknown[];
  /** Damaged stretches with intact records after them: skipped, and reading went on after each. */
  readonly skipped: TornTail[];
  /** The end of the segment, from a bad record on, when no intact record follows it. */
  readonly torn?: TornTail;
  /** Zero bytes after the last record: the space the segment was grown into ahead of its records. */
  readonly unused?: number;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** The record at `offset`, or why it is not one. */
function recordAt(data: Buffer, offset: number): { record: unknown; end: number } | TornTail["reason"] {
  if (data.length - offset < HEADER_BYTES) return "truncated header";
  const length = data.readUInt32LE(offset);
  if (length > MAX_RECORD_BYTES) return "bad length";
  const start = offset + HEADER_BYTES;
  if (start + length > data.length) return "truncated record";
  const body = data.subarray(start, start + length);
  if (crc32(body) !== data.readUInt32LE(offset + 4)) return "CRC mismatch";
  try {
    return { record: JSON.parse(body.toString("utf8")), end: start + length };
  } catch {
    return "not JSON";
  }
}

/**
 * The next intact record after a damaged one: every body is a JSON object, so only a `{` eight bytes
 * past a candidate offset, with a `}` where its length ends and a matching CRC, is taken for one.
 */
function nextRecordAfter(data: Buffer, from: number): number | undefined {
  for (let brace = data.indexOf(OPEN_BRACE, from + HEADER_BYTES + 1); brace >= 0; ) {
    const offset = brace - HEADER_BYTES;
    const length = data.readUInt32LE(offset);
    if (length >= 2 && brace + length <= data.length && data[brace + length - 1] === CLOSE_BRACE) {
      if (typeof recordAt(data, offset) !== "string") return offset;
    }
    brace = data.indexOf(OPEN_BRACE, brace + 1);
  }
  return undefined;
}

/** A block of zeros to compare a segment's tail with. */
const ZEROS = Buffer.alloc(4096);

/**
 * The last byte that is not zero, from `offset` on (-1 when there is none). A segment's tail is mostly the
 * zeros it was grown into (a megabyte), passed over a block at a time (one native compare each) rather than
 * a byte at a time; the block that is not all zeros is then read byte by byte.
 */
function lastNonZero(data: Buffer, offset: number): number {
  let end = data.length;
  while (end - offset >= ZEROS.length && data.subarray(end - ZEROS.length, end).equals(ZEROS))
    end -= ZEROS.length;
  for (let at = end - 1; at >= offset; at--) if (data[at] !== 0) return at;
  return -1;
}

/**
 * What ends a segment at `offset`, where `read` found no record and no intact one follows; undefined when
 * all of it is zeros: the space the file was grown into ahead of its records (or grew by before a power cut,
 * its data never synced), where nothing was cut short.
 */
function tailFrom(data: Buffer, offset: number, read: TornTail["reason"]): TornTail | undefined {
  const last = lastNonZero(data, offset);
  if (last < 0) return undefined;
  // Where the record at `offset` says it ends. A length no record has is garbage, whatever follows it:
  // zeros only ever shorten a length.
  const end =
    read === "bad length" || data.length - offset < HEADER_BYTES
      ? undefined
      : offset + HEADER_BYTES + data.readUInt32LE(offset);
  // A whole record ends with the `}` of its JSON, never a zero byte: one that ends in zeros, or past the
  // file's end, was cut short by a crash (its start reached the disk, its end did not). Not the first: a
  // segment's snapshot is durable before a record follows it, so what is unreadable from byte 0 on is damage,
  // whatever its length says (garbage there, pointing into the zeros grown ahead, is no record at all).
  const cutShort = offset > 0 && end !== undefined && (end > data.length || data[end - 1] === 0);
  const reason = cutShort ? "truncated record" : read;
  // The record cut short: its bytes. Damage: what is not zero, not the zeros of the space grown ahead.
  const through = Math.max(
    last + 1,
    Math.min(data.length, cutShort && end !== undefined ? end : offset + HEADER_BYTES),
  );
  return { offset, skippedBytes: through - offset, reason };
}

/**
 * Every intact record of `data`, in order. A damaged record (a flipped bit, a hand edit) followed by
 * intact ones is skipped and reading goes on at the next intact record; one with none after it (a tail
 * a crash cut short) ends the list.
 */
export function decodeRecords(data: Buffer): DecodedSegment {
  const records: unknown[] = [];
  const skipped: TornTail[] = [];
  let offset = 0;
  while (offset < data.length) {
    const read = recordAt(data, offset);
    if (typeof read !== "string") {
      records.push(read.record);
      offset = read.end;
      continue;
    }
    const next = nextRecordAfter(data, offset);
    if (next === undefined) {
      const torn = tailFrom(data, offset, read);
      return torn === undefined
        ? { records, skipped, unused: data.length - offset }
        : { records, skipped, torn };
    }
    // A length that reaches past a later intact record was damaged itself.
    const reason = read === "truncated header" || read === "truncated record" ? "bad length" : read;
    skipped.push({ offset, skippedBytes: next - offset, reason });
    offset = next;
  }
  return { records, skipped };
}

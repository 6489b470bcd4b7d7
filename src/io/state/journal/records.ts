import { crc32 } from "node:zlib";

/**
 * The journal's framing: each record is `[u32 length][u32 CRC-32 of the body][body]` (little endian),
 * the body one JSON document. A torn tail (a crash in the middle of a write) or a flipped bit shows as a
 * length past the end or a CRC mismatch: reading stops there and reports where.
 */
export const HEADER_BYTES = 8;
/** No record is this large (a prompt is bounded by max_body_bytes); a bigger length is corruption. */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

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

  add(record: unknown): void {
    const text = JSON.stringify(record);
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    const most = this.used + HEADER_BYTES + text.length * 3;
    let buffer = this.buffer;
    if (buffer === undefined || most > buffer.length) {
      // Starts small, from Node's buffer pool (a one-event flush allocates no ArrayBuffer of its own).
      const grown = Buffer.allocUnsafe(Math.max(most, 2 * (buffer?.length ?? 0), 1024));
      buffer?.copy(grown, 0, 0, this.used);
      buffer = grown;
      this.buffer = grown;
    }
    const start = this.used + HEADER_BYTES;
    const length = buffer.write(text, start, "utf8");
    buffer.writeUInt32LE(length, this.used);
    buffer.writeUInt32LE(crc32(buffer.subarray(start, start + length)), this.used + 4);
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

/** Where and why reading a segment stopped before its end. */
export interface TornTail {
  readonly offset: number;
  readonly skippedBytes: number;
  readonly reason: "truncated header" | "truncated record" | "bad length" | "CRC mismatch" | "not JSON";
}

export interface DecodedSegment {
  readonly records: unknown[];
  readonly torn?: TornTail;
}

/** Every whole, intact record from the start of `data`; the first bad one ends the list. */
export function decodeRecords(data: Buffer): DecodedSegment {
  const records: unknown[] = [];
  let offset = 0;
  const stop = (reason: TornTail["reason"]): DecodedSegment => ({
    records,
    torn: { offset, skippedBytes: data.length - offset, reason },
  });
  while (offset < data.length) {
    if (data.length - offset < HEADER_BYTES) return stop("truncated header");
    const length = data.readUInt32LE(offset);
    const sum = data.readUInt32LE(offset + 4);
    if (length > MAX_RECORD_BYTES) return stop("bad length");
    const start = offset + HEADER_BYTES;
    if (start + length > data.length) return stop("truncated record");
    const body = data.subarray(start, start + length);
    if (crc32(body) !== sum) return stop("CRC mismatch");
    try {
      records.push(JSON.parse(body.toString("utf8")));
    } catch {
      return stop("not JSON");
    }
    offset = start + length;
  }
  return { records };
}

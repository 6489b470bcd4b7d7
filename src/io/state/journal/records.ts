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

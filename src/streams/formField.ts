const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;

/** The value of one hex digit, or -1. */
function hexDigit(code: number | undefined): number {
  if (code === undefined) return -1;
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/** `body[start..end)` with `+` as a space and each `%XX` as its byte; a `%` without two hex digits stays. */
function percentDecoded(body: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  let length = 0;
  for (let i = start; i < end; i++) {
    const code = body[i] as number;
    if (code === PLUS) {
      out[length++] = 0x20;
      continue;
    }
    if (code === PERCENT && i + 2 < end) {
      const high = hexDigit(body[i + 1]);
      const low = hexDigit(body[i + 2]);
      if (high >= 0 && low >= 0) {
        out[length++] = high * 16 + low;
        i += 2;
        continue;
      }
    }
    out[length++] = code;
  }
  return out.subarray(0, length);
}

/**
 * The bytes of the first field `name` of an `application/x-www-form-urlencoded` body, read as the URL
 * standard's form parser reads it (`&`-separated `name=value` pairs, `+` a space, `%XX` a byte), or
 * undefined when there is no such field. Bytes, not text: a value whose escapes are not UTF-8 (`%FF`)
 * stays as sent for the JSON parser to refuse, where `URLSearchParams` turns it into U+FFFD unseen.
 */
export function formFieldBytes(body: Buffer, name: string): Buffer | undefined {
  let start = 0;
  while (start <= body.length) {
    let end = start;
    let equals = -1;
    while (end < body.length && body[end] !== AMPERSAND) {
      if (equals < 0 && body[end] === EQUALS) equals = end;
      end++;
    }
    if (end > start) {
      const nameEnd = equals < 0 ? end : equals;
      if (percentDecoded(body, start, nameEnd).toString("utf8") === name)
        return percentDecoded(body, equals < 0 ? end : equals + 1, end);
    }
    start = end + 1;
  }
  return undefined;
}

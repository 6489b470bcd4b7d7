/**
 * How many of `bytes` (UTF-8 cut at an arbitrary byte) to keep so that the text ends on a whole character:
 * an incomplete sequence at the end is left out rather than decoded as U+FFFD.
 */
export function wholeUtf8Length(bytes: Uint8Array): number {
  // A character is at most 4 bytes: look back at most 3 for the lead byte of the last one.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

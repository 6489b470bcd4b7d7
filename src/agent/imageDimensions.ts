/** An image's size in pixels, as its file header gives it. */
export interface ImageDimensions {
  readonly width: number;
  readonly height: number;
}

/** JPEG's start-of-frame markers (baseline, progressive, lossless, ...), which carry the frame's size. */
const JPEG_FRAMES = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegDimensions(bytes: Buffer): ImageDimensions | undefined {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] as number;
    // Fill bytes before a marker, and the markers that have no length (restarts, TEM).
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (JPEG_FRAMES.has(marker))
      return at + 9 <= bytes.length
        ? { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) }
        : undefined;
    at += 2 + length;
  }
  return undefined;
}

function webpDimensions(bytes: Buffer): ImageDimensions | undefined {
  const chunk = bytes.toString("latin1", 12, 16);
  if (chunk === "VP8X" && bytes.length >= 30)
    return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  if (chunk === "VP8 " && bytes.length >= 30)
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L" && bytes.length >= 25) {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  return undefined;
}

/**
 * The width and height a PNG, GIF, JPEG or WebP file's header gives, or undefined for other data (or a
 * header cut short). Only the header is read; the image is not decoded.
 */
export function imageDimensions(bytes: Buffer): ImageDimensions | undefined {
  if (
    bytes.length >= 24 &&
    bytes.toString("latin1", 1, 4) === "PNG" &&
    bytes.toString("latin1", 12, 16) === "IHDR"
  )
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && /^GIF8[79]a$/.test(bytes.toString("latin1", 0, 6)))
    return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegDimensions(bytes);
  if (
    bytes.length >= 16 &&
    bytes.toString("latin1", 0, 4) === "RIFF" &&
    bytes.toString("latin1", 8, 12) === "WEBP"
  )
    return webpDimensions(bytes);
  return undefined;
}

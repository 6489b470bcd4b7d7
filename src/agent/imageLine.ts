/** How an image a model is not shown is named to it (pure: the tool results of both providers use it). */
import { type ImageDimensions, imageDimensions } from "./imageDimensions.js";

/** The size in pixels of the image whose base64 is `data`, as its header gives it. */
export function pixelsOf(data: string): ImageDimensions | undefined {
  // The header is at the start, but a JPEG's frame comes after its EXIF (at most 64 KB): up to 192 KB is read.
  const head = imageDimensions(Buffer.from(data.slice(0, 4096), "base64"));
  return head !== undefined || !data.startsWith("/9j/")
    ? head
    : imageDimensions(Buffer.from(data.slice(0, 262_144), "base64"));
}

/** The line a model gets for an image it is not shown: its type, size (and pixels, when they are why) and why. */
export function imageLine(
  mimeType: string,
  data: string,
  pixels: ImageDimensions | undefined,
  why: string,
): string {
  const bytes = Buffer.byteLength(data, "base64");
  return `[image: ${mimeType}, ${bytes} bytes${pixels === undefined ? "" : `, ${pixels.width}×${pixels.height} pixels`} — not shown: ${why}]`;
}

/**
 * What a power cut can leave of a file whose new size reached the disk before its data: zero bytes only.
 * Said as that (`holds only zero bytes (300 bytes): …`), or undefined for any other content; an empty file is
 * not zero-filled (each reader has its own word for it).
 */
export function zeroFilledProblem(content: string | Uint8Array): string | undefined {
  if (content.length === 0) return undefined;
  if (typeof content === "string") {
    for (let i = 0; i < content.length; i++) if (content.charCodeAt(i) !== 0) return undefined;
  } else if (content.some((byte) => byte !== 0)) return undefined;
  return `holds only zero bytes (${content.length} bytes): its data never reached the disk (a power cut or a crash as it was written)`;
}

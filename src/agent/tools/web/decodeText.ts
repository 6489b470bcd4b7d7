/**
 * What windows-1252 puts at 0x80..0x9F (the WHATWG Encoding Standard's table; the five bytes it leaves
 * unassigned stay the C1 control of the same number). Node 20's TextDecoder decodes windows-1252 —
 * and the labels that mean it on the web: iso-8859-1, latin1, us-ascii — as Latin-1, so a page's
 * €, curly quotes, dashes and ™ came back as invisible C1 controls.
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeWindows1252(body: Uint8Array): string {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("latin1");
  return text.replace(/[\x80-\x9f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
}

/** `body` decoded in `charset` (a label as a page names it); an unknown label reads as UTF-8. */
export function decodeText(body: Uint8Array, charset: string): string {
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.encoding === "windows-1252" ? decodeWindows1252(body) : decoder.decode(body);
}

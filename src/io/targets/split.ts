/**
 * How a platform counts its message-size limit: UTF-16 characters, UTF-8 bytes, or the size of each
 * character as sent (a target that escapes text, e.g. Slack's `&lt;`, counts what the platform receives).
 */
export type SizeUnit = "chars" | "utf8" | ((ch: string) => number);

const charSize = (unit: Exclude<SizeUnit, "chars">) =>
  unit === "utf8" ? (ch: string) => Buffer.byteLength(ch, "utf8") : unit;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Length of the longest prefix of `text` that fits `limit` (never ends inside a surrogate pair). */
function fittingPrefix(text: string, limit: number, unit: SizeUnit): number {
  if (unit === "chars") {
    let end = Math.min(limit, text.length);
    if (end < text.length && end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    return end;
  }
  const sizeOfChar = charSize(unit);
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = sizeOfChar(ch);
    if (bytes + size > limit) break;
    bytes += size;
    end += ch.length;
  }
  return end;
}

export function sizeOf(text: string, unit: SizeUnit): number {
  if (unit === "chars") return text.length;
  if (unit === "utf8") return Buffer.byteLength(text, "utf8");
  let size = 0;
  for (const ch of text) size += unit(ch);
  return size;
}

/** Where to cut inside `window`: after its last newline, else after its last whitespace, else at its end. */
function cutPoint(window: string): number {
  const newline = window.lastIndexOf("\n");
  if (newline > 0) return newline + 1;
  const space = Math.max(window.lastIndexOf(" "), window.lastIndexOf("\t"));
  if (space > 0) return space + 1;
  return window.length;
}

/**
 * Splits `text` into parts of at most `limit` (in `unit`), in order, cutting on
 * line boundaries where possible, then on spaces, then anywhere. Joining the parts gives back `text`.
 */
export function splitMessage(text: string, limit: number, unit: SizeUnit = "chars"): string[] {
  if (!Number.isInteger(limit) || limit < 4)
    throw new RangeError(`message limit must be an integer >= 4, got ${limit}`);
  if (sizeOf(text, unit) <= limit) return [text];
  const parts: string[] = [];
  let rest = text;
  while (sizeOf(rest, unit) > limit) {
    const end = fittingPrefix(rest, limit, unit);
    const cut = cutPoint(rest.slice(0, end));
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

/**
 * The index just past the JSON value that starts at `start` (after any whitespace) in `text`, a text known
 * to be valid JSON: strings are skipped with their escapes, objects and arrays to their matching bracket,
 * and a number or literal to the first character that cannot be part of it.
 */
export function jsonValueEnd(text: string, start: number): number {
  let i = pastSpaces(text, start);
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i) - 1;
      if (depth === 0) return i + 1;
    } else if (c === "{" || c === "[") {
      depth++;
    } else if (c === "}" || c === "]") {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && (c === "," || isSpace(text.charCodeAt(i)))) {
      return i;
    }
  }
  return i;
}

/** The index just past the string whose opening quote is at `open`. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

/** The index of the first character at or after `i` that is not JSON whitespace. */
export function pastSpaces(text: string, i: number): number {
  let at = i;
  while (isSpace(text.charCodeAt(at))) at++;
  return at;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

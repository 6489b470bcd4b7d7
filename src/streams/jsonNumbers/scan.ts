/**
 * The one pass over a JSON text that tells whether anything must be kept (and how deep it nests), and the
 * token helpers the walk shares.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

export function isNumberStart(code: number): boolean {
  return code === 0x2d || (code >= 0x30 && code <= 0x39);
}

export function isNumberPart(code: number): boolean {
  // digits, minus, plus, dot, e, E
  return (
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code === 0x2b ||
    code === 0x2e ||
    code === 0x65 ||
    code === 0x45
  );
}

/** Index just past the string token that starts (with its quote) at `at`, or -1 when unterminated. */
export function skipString(text: string, at: number): number {
  let i = at;
  for (;;) {
    const close = text.indexOf('"', i + 1);
    if (close === -1) return -1;
    let k = close - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    i = close;
    if ((close - 1 - k) % 2 === 0) return close + 1;
  }
}

/** A number token whose JavaScript text (`String(Number(token))`) is not the token itself. */
function differs(token: string): boolean {
  return String(Number(token)) !== token;
}

/** The number token at `start..end` always prints back as written: a short plain integer other than -0. */
export function plainToken(text: string, start: number, end: number): boolean {
  if (end - start > 15) return false;
  for (let k = start; k < end; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x30 || c > 0x39) {
      if (k !== start) return false; // . e E + -
    }
  }
  return !(text.charCodeAt(start) === 0x2d && text.charCodeAt(start + 1) === 0x30);
}

/** `scanJsonText` found nesting deeper than its limit (the scan stops there). */
export const NESTED_TOO_DEEP = 1;
/** `scanJsonText` found a number that would not print back as written. */
export const ALTERED_NUMBERS = 2;
/** `scanJsonText` found a key of digits, which JavaScript may list before keys written ahead of it. */
export const DIGIT_KEYS = 4;

export const OPEN_BRACE = 0x7b;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACE = 0x7d;
export const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
export const COMMA = 0x2c;

export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** At most 10 digits, each escaped (`\u0031`): the longest text of a key that can be an array index. */
const MAX_ESCAPED_DIGIT_KEY = 2 + 10 * 6;

/** The string token `token` (quotes included, escapes in it) reads as digits alone. */
function escapedDigits(token: string): boolean {
  try {
    return /^\d{1,10}$/.test(JSON.parse(token) as string);
  } catch {
    return false; // not a valid string: JSON.parse refuses the whole text
  }
}

/**
 * The string token `text[start..end)` (quotes included) is a key made of digits alone (`"2"`, `"10"`,
 * or written with escapes, `"\u0031"`): one JavaScript may list out of the written order (an array
 * index, at most 10 digits).
 */
function digitKey(text: string, start: number, end: number): boolean {
  if (end - start > MAX_ESCAPED_DIGIT_KEY || end - start < 3) return false;
  for (let k = start + 1; k < end - 1; k++) {
    const c = text.charCodeAt(k);
    if (c === BACKSLASH) return isKey(text, end) && escapedDigits(text.slice(start, end));
    if (!isDigit(c) || end - start > 12) return false;
  }
  return isKey(text, end);
}

/** The string token that ends at `end` is a key: a colon follows it. */
function isKey(text: string, end: number): boolean {
  let next = end;
  for (;;) {
    const c = text.charCodeAt(next);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) next++;
    else return c === COLON;
  }
}

/**
 * One pass over a JSON text (strings jumped over natively, so brackets and digits inside them do not
 * count): `NESTED_TOO_DEEP` when arrays/objects nest deeper than `maxDepth`, `ALTERED_NUMBERS` when some number
 * would not print back as written, `DIGIT_KEYS` when some key is digits alone (escaped or not). One pass for all, since the
 * string jumping is most of the cost.
 */
export function scanJsonText(text: string, maxDepth: number): number {
  const length = text.length;
  let depth = 0;
  let found = 0;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = skipString(text, i);
      if (end === -1) break;
      const first = text.charCodeAt(i + 1);
      if ((found & DIGIT_KEYS) === 0 && (isDigit(first) || first === BACKSLASH) && digitKey(text, i, end))
        found |= DIGIT_KEYS;
      i = end - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > maxDepth) return found | NESTED_TOO_DEEP;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else if ((found & ALTERED_NUMBERS) === 0 && isNumberStart(code)) {
      let end = i + 1;
      while (end < length && isNumberPart(text.charCodeAt(end))) end++;
      if (!plainToken(text, i, end) && differs(text.slice(i, end))) found |= ALTERED_NUMBERS;
      i = end - 1;
    }
  }
  return found;
}

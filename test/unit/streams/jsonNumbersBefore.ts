/**
 * src/streams/jsonNumbers.ts as it was before its walk was rewritten for speed (one WeakMap entry per
 * container, no Map per holder, no key-order work for objects without digit keys): the oracle
 * jsonNumbersSame.test.ts compares the new one with, byte for byte, on generated bodies.
 */
import { randomBytes } from "node:crypto";

/**
 * Numbers as the sender wrote them. `JSON.parse` turns `1.0` into `1` and `12345678901234567890` into
 * `12345678901234567000`; templates ("the nested payload value") and the script's stdin
 * must show the value that was sent. Node 20 has no JSON source-text access, so after `JSON.parse` a
 * scan of the text finds numbers whose JavaScript text differs from their source (rare: most payloads
 * have none, and then this costs one pass over the text) and remembers their source per holder object.
 * Likewise the order of an object's keys: a JavaScript object lists keys that are array indices
 * (`"2"`, `"10"`) first, in numeric order, so `{"id": 1, "2": "x"}` would print as `{"2": "x", "id": 1}`;
 * the order the sender wrote is remembered for such an object and serialized back.
 */

/** holder object or array → key (array index as a string) → the number's source text. */
const sourceTexts = new WeakMap<object, Map<string, string>>();
/** object → its keys in the order the sender wrote them, where JavaScript lists them in another order. */
const keyOrders = new WeakMap<object, readonly string[]>();
/** Containers with such a number or object somewhere inside: only these need the slower serialization. */
const tainted = new WeakSet<object>();

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isNumberStart(code: number): boolean {
  return code === 0x2d || (code >= 0x30 && code <= 0x39);
}

function isNumberPart(code: number): boolean {
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
function skipString(text: string, at: number): number {
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
function plainToken(text: string, start: number, end: number): boolean {
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

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;

function isDigit(code: number): boolean {
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
    if (c === BACKSLASH) {
      if (!escapedDigits(text.slice(start, end))) return false;
      break;
    }
    if (!isDigit(c) || end - start > 12) return false;
  }
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

class Mismatch extends Error {}

/**
 * Walks the JSON text beside the tree `JSON.parse` built from it and records the source of numbers
 * that print differently. Throws Mismatch when text and tree disagree (then nothing is recorded).
 * A repeated key: JSON.parse kept the last value, so an earlier occurrence is only recorded when its
 * number equals the kept one, and a later plain occurrence drops an earlier record; an earlier
 * occurrence of another shape than the kept value (an object, then a text) is stepped over unread,
 * so it costs the rest of the payload none of its numbers' texts. An object whose keys JavaScript lists
 * in another order than the text gets the text's order (a repeated key where it first appears, as
 * `JSON.parse` keeps it); the last occurrence of a repeated key, the kept one, decides.
 */
function record(text: string, root: object): void {
  let i = 0;
  const path: object[] = [];
  const pending = new Map<object, Map<string, string>>();
  const orders = new Map<object, readonly string[]>();
  const marked = new Set<object>();
  /** The containers on the path, the innermost included, need the slower serialization. */
  const mark = (): void => {
    for (let d = path.length - 1; d >= 0 && !marked.has(path[d] as object); d--)
      marked.add(path[d] as object);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };
  /**
   * Steps over the object or array that starts at `i`: an earlier occurrence of a repeated key, of
   * another shape than the value the tree kept (strings inside jumped over, so their brackets do not count).
   */
  const skipContainer = (): void => {
    let depth = 0;
    do {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = skipString(text, i);
        if (i === -1) throw new Mismatch();
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
      i++;
    } while (depth > 0 && i < text.length);
  };
  const value = (holder: object | undefined, key: string | number, parsed: unknown): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */) {
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        // Only an earlier occurrence of a repeated key can disagree with the tree JSON.parse built.
        if (holder === undefined) throw new Mismatch();
        skipContainer();
        return;
      }
      path.push(parsed);
      const written: string[] = [];
      i++;
      ws();
      if (text.charCodeAt(i) === 0x7d) i++;
      else {
        for (;;) {
          ws();
          const end = skipString(text, i);
          if (end === -1) throw new Mismatch();
          const raw = text.slice(i + 1, end - 1);
          const name = raw.includes("\\") ? (JSON.parse(text.slice(i, end)) as string) : raw;
          written.push(name);
          i = end;
          ws();
          i++; // :
          // Own keys only: an earlier occurrence's `constructor` is not the kept object's prototype's.
          value(
            parsed,
            name,
            Object.hasOwn(parsed, name) ? (parsed as Record<string, unknown>)[name] : undefined,
          );
          ws();
          if (text.charCodeAt(i++) === 0x7d) break;
        }
      }
      const order = writtenOrder(written, parsed);
      if (order === undefined) orders.delete(parsed);
      else {
        orders.set(parsed, order);
        mark();
      }
      path.pop();
    } else if (c === 0x5b /* [ */) {
      if (!Array.isArray(parsed)) {
        if (holder === undefined) throw new Mismatch();
        skipContainer();
        return;
      }
      path.push(parsed);
      i++;
      ws();
      if (text.charCodeAt(i) === 0x5d) i++;
      else {
        for (let index = 0; ; index++) {
          value(parsed, index, parsed[index]);
          ws();
          if (text.charCodeAt(i++) === 0x5d) break;
        }
      }
      path.pop();
    } else if (c === QUOTE) {
      i = skipString(text, i);
      if (i === -1) throw new Mismatch();
    } else if (isNumberStart(c)) {
      const start = i;
      while (i < text.length && isNumberPart(text.charCodeAt(i))) i++;
      // Not the kept value (an earlier occurrence of a repeated key): nothing to record.
      if (holder === undefined || typeof parsed !== "number") return;
      const texts = pending.get(holder);
      if (plainToken(text, start, i)) {
        texts?.delete(String(key));
        return;
      }
      const token = text.slice(start, i);
      if (Number(token) !== parsed) return;
      if (!differs(token)) {
        texts?.delete(String(key));
        return;
      }
      if (texts === undefined) pending.set(holder, new Map([[String(key), token]]));
      else texts.set(String(key), token);
      mark();
    } else {
      // true, false, null
      i += c === 0x66 /* f */ ? 5 : 4;
    }
  };
  value(undefined, "", root);
  // Only a complete walk is trusted: nothing is recorded when text and tree disagree somewhere.
  for (const [holder, texts] of pending) sourceTexts.set(holder, texts);
  for (const [object, order] of orders) keyOrders.set(object, order);
  for (const container of marked) tainted.add(container);
}

/**
 * The keys of `object` in the order `written` (the text's keys, a repeated one where it first appears),
 * or undefined when JavaScript lists them so already or `written` does not name exactly its keys.
 */
function writtenOrder(written: readonly string[], object: object): readonly string[] | undefined {
  const listed = Object.keys(object);
  const order = written.length === listed.length ? written : [...new Set(written)];
  if (order.length !== listed.length || order.every((key, k) => key === listed[k])) return undefined;
  return order.every((key) => Object.hasOwn(object, key)) ? order : undefined;
}

/**
 * Deepest array/object nesting `parseJson` accepts. Real payloads nest a handful of levels; far deeper
 * ones parse, but overflow the stack of what renders them (`JSON.stringify` fails near 10 000 levels).
 */
export const MAX_JSON_DEPTH = 512;

/** `parseJson` met nesting deeper than `MAX_JSON_DEPTH`. */
export class JsonTooDeep extends Error {
  constructor() {
    super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/**
 * `JSON.parse(text)`, remembering the source text of numbers that would not print back as written
 * (`1.0`, `1e3`, integers past 2^53). Throws like `JSON.parse` on invalid JSON, and `JsonTooDeep`.
 */
export function parseJson(text: string): unknown {
  const found = scanJsonText(text, MAX_JSON_DEPTH);
  if ((found & NESTED_TOO_DEEP) !== 0) throw new JsonTooDeep();
  const parsed: unknown = JSON.parse(text);
  if ((found & (ALTERED_NUMBERS | DIGIT_KEYS)) !== 0 && typeof parsed === "object" && parsed !== null) {
    try {
      record(text, parsed as object);
    } catch {
      // Not walkable (text and tree disagree): numbers print as JavaScript does.
    }
  }
  return parsed;
}

/** The text of `holder[key]`, a number: as the sender wrote it when known, else its JSON text. */
export function numberText(holder: unknown, key: string, value: number): string {
  if (typeof holder === "object" && holder !== null) {
    const text = sourceTexts.get(holder)?.get(key);
    if (text !== undefined) return text;
  }
  return JSON.stringify(value);
}

const NONCE = randomBytes(12).toString("hex");
const MARKER = new RegExp(`"${NONCE}:(\\d+)"`, "g");

/**
 * `JSON.stringify(value, null, indent)` with numbers as the sender wrote them and keys in the order the
 * sender wrote them. A marker string with a per-process random nonce stands in for each such number and
 * is swapped back after serialization; an object whose keys JavaScript lists in another order is
 * serialized through a view that lists them in the sender's.
 */
export function stringifyJson(value: unknown, indent?: number): string | undefined {
  if (typeof value !== "object" || value === null || !tainted.has(value)) {
    return JSON.stringify(value, null, indent);
  }
  const texts: string[] = [];
  /** view → the object it lists in the sender's order (the holder whose number texts are recorded). */
  const viewed = new Map<object, object>();
  const out = JSON.stringify(
    value,
    function (this: unknown, key: string, item: unknown) {
      if (typeof item === "object" && item !== null) {
        const order = keyOrders.get(item);
        if (order === undefined) return item;
        const view = new Proxy(item, { ownKeys: () => [...order] });
        viewed.set(view, item);
        return view;
      }
      if (typeof item !== "number") return item;
      const holder = viewed.get(this as object) ?? (this as object);
      const text = sourceTexts.get(holder)?.get(key);
      if (text === undefined) return item;
      texts.push(text);
      return `${NONCE}:${texts.length - 1}`;
    },
    indent,
  );
  return out.replace(MARKER, (_m, index: string) => texts[Number(index)] as string);
}

/**
 * `stringifyJson(value, indent)` where only its first `atLeast` characters (code points) are read: the
 * text of a copy of `value` that leaves out everything after the point where that many characters are
 * certainly written (counting only what each element surely adds: its comma, line break and indentation,
 * a key's quotes and colon, a number's text, half a string's length). A payload's indented dump is cut at
 * a few thousand characters, but indented in full a large body can be hundreds of megabytes (each of 600,000
 * numbers of a 1.3 MB array nested 500 deep sits on a line of 1,000 spaces: past V8's longest string, a
 * RangeError), seconds of work for text that is thrown away. Each element visited surely adds at least
 * one character (three when indented), so at most `atLeast + 1` of them are copied. An object's keys are
 * visited and kept in the order the sender wrote them, as `stringifyJson` prints them.
 */
export function stringifyJsonHead(value: unknown, indent: number, atLeast: number): string | undefined {
  let written = 0;
  const lineStart = (depth: number) => (indent > 0 ? 1 + indent * (depth + 1) : 0);
  const surely = (item: unknown, holder: object, key: string): number => {
    if (typeof item === "string") return 2 + Math.floor(item.length / 2);
    if (typeof item === "number") return numberText(holder, key, item).length;
    if (typeof item === "boolean") return item ? 4 : 5;
    return item === null ? 4 : 1;
  };
  const head = (node: unknown, depth: number): unknown => {
    if (typeof node !== "object" || node === null) return node;
    const order = Array.isArray(node) ? undefined : keyOrders.get(node);
    const keys = Array.isArray(node) ? undefined : (order ?? Object.keys(node));
    const size = keys === undefined ? (node as unknown[]).length : keys.length;
    const texts = sourceTexts.get(node);
    const keptTexts = new Map<string, string>();
    const copy: unknown[] | Record<string, unknown> = keys === undefined ? [] : {};
    for (let i = 0; i < size && written <= atLeast; i++) {
      const key = keys === undefined ? String(i) : (keys[i] as string);
      const item = (node as Record<string, unknown>)[key];
      written += (i > 0 ? 1 : 0) + lineStart(depth) + surely(item, node, key);
      if (keys !== undefined) written += 3 + Math.floor(key.length / 2) + (indent > 0 ? 1 : 0);
      const text = texts?.get(key);
      if (text !== undefined) keptTexts.set(key, text);
      const kept = head(item, depth + 1);
      if (keys === undefined) (copy as unknown[]).push(kept);
      else
        Object.defineProperty(copy, key, {
          value: kept,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    if (keptTexts.size > 0) sourceTexts.set(copy, keptTexts);
    if (order !== undefined) keyOrders.set(copy, order.slice(0, Object.keys(copy).length));
    if (tainted.has(node)) tainted.add(copy);
    return copy;
  };
  return stringifyJson(head(value, 0), indent);
}

/** `{ ...object, ...extra }` that keeps the sender's number texts and key order of `object`'s own keys. */
export function extendObject(
  object: Record<string, unknown>,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const copy = { ...object, ...extra };
  const texts = sourceTexts.get(object);
  if (texts !== undefined) {
    const kept = new Map([...texts].filter(([key]) => !Object.hasOwn(extra, key)));
    if (kept.size > 0) sourceTexts.set(copy, kept);
  }
  const order = keyOrders.get(object);
  if (order !== undefined)
    keyOrders.set(copy, [...order, ...Object.keys(extra).filter((key) => !Object.hasOwn(object, key))]);
  if (tainted.has(object)) tainted.add(copy);
  return copy;
}

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

/**
 * What is kept of a parsed array or object beyond its value: a container has one when it holds such a
 * number or is such an object (`INSIDE` when it only has one somewhere inside).
 */
class Kept {
  /** An array's numbers that print differently: their source text by index (none: a hole or undefined). */
  items: (string | undefined)[] | undefined;
  /**
   * An object's, by key: `[key, text, key, text, ...]`, a Map past `NAMED_PAIRS` of them (most objects
   * have one or two such numbers, and a Map per object is most of what a body of many objects costs).
   */
  named: string[] | Map<string, string> | undefined;
  /** An object's keys in the order the sender wrote them, where JavaScript lists them in another order. */
  order: readonly string[] | undefined;
  constructor(order: readonly string[] | undefined) {
    this.items = undefined;
    this.named = undefined;
    this.order = order;
  }

  hasTexts(): boolean {
    return this.items !== undefined || this.named !== undefined;
  }

  /** The text of the number at `key` (an array's index as a string, `"2"`; `"02"` names no element). */
  text(key: string): string | undefined {
    const { items, named } = this;
    if (items !== undefined) {
      const text: unknown = (items as unknown as Record<string, unknown>)[key];
      return typeof text === "string" ? text : undefined;
    }
    if (named === undefined) return undefined;
    if (!Array.isArray(named)) return named.get(key);
    for (let k = 0; k < named.length; k += 2) if (named[k] === key) return named[k + 1];
    return undefined;
  }

  /** Keeps `text` for an array's element `index`, or (`index` -1) an object's key `name`. */
  setText(index: number, name: string, text: string): void {
    if (index !== -1) {
      if (this.items === undefined) this.items = [];
      this.items[index] = text;
      return;
    }
    const named = this.named;
    if (named === undefined) this.named = [name, text];
    else if (!Array.isArray(named)) named.set(name, text);
    else {
      for (let k = 0; k < named.length; k += 2) {
        if (named[k] === name) {
          named[k + 1] = text;
          return;
        }
      }
      if (named.length < 2 * NAMED_PAIRS) named.push(name, text);
      else this.named = new Map([...this.namedTexts(), [name, text]]);
    }
  }

  dropText(index: number, name: string): void {
    const { items, named } = this;
    if (items !== undefined) {
      if (items[index] !== undefined) items[index] = undefined;
    } else if (named instanceof Map) named.delete(name);
    else if (named !== undefined) {
      for (let k = 0; k < named.length; k += 2) {
        if (named[k] === name) {
          named.splice(k, 2);
          if (named.length === 0) this.named = undefined;
          return;
        }
      }
    }
  }

  /** An object's keys and texts. */
  namedTexts(): [string, string][] {
    const named = this.named;
    if (named === undefined) return [];
    if (!Array.isArray(named)) return [...named];
    const pairs: [string, string][] = [];
    for (let k = 0; k < named.length; k += 2) pairs.push([named[k] as string, named[k + 1] as string]);
    return pairs;
  }
}

/** Past this many, an object's number texts go in a Map. */
const NAMED_PAIRS = 8;

/** A container with a `Kept` somewhere inside but none of its own: one `Kept` shared by all, never changed. */
const INSIDE = new Kept(undefined);

/** Its constructor returns the object it is given, so a subclass's private field lands on that object. */
class OnObject {
  constructor(object: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the object given is the one the subclass's field is added to.
    return object;
  }
}

/**
 * A container's `Kept`, held in a private field added to the container itself. A WeakMap would do the
 * same, but its entries cost about 1 µs each (with the garbage collector's work on a table that lives as
 * long as the process): a 1 MiB body of 100 000 objects like `{"x": 1.0}` spent 10 times `JSON.parse`'s
 * time on them; a private field costs about as much as adding a property, and nothing can see it
 * (`Object.keys`, `Reflect.ownKeys`, spreading, `structuredClone`, `JSON.stringify` all leave it out).
 */
class Keeps extends OnObject {
  #kept: Kept;
  private constructor(object: object, kept: Kept) {
    super(object);
    this.#kept = kept;
  }
  static get(container: object): Kept | undefined {
    return #kept in container ? (container as Keeps).#kept : undefined;
  }
  static set(container: object, kept: Kept): void {
    if (#kept in container) (container as Keeps).#kept = kept;
    else new Keeps(container, kept);
  }
}

/** `value` has a `Kept` somewhere inside, itself included: only then is the slower serialization needed. */
function isTainted(value: object): boolean {
  return Keeps.get(value) !== undefined;
}

/** The source text of the number `holder[key]`, when it prints differently. */
function keptText(holder: object, key: string): string | undefined {
  return Keeps.get(holder)?.text(key);
}

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
const COMMA = 0x2c;

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

class Mismatch extends Error {}

/** Index just past the object or array that starts at `at` (strings inside jumped over), or -1. */
function skipContainer(text: string, at: number): number {
  let i = at;
  let depth = 0;
  do {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
      if (i === -1) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    i++;
  } while (depth > 0 && i < text.length);
  return i;
}

/**
 * Walks the JSON text beside the tree `JSON.parse` built from it (`found`: what `scanJsonText` saw) and
 * records the source of numbers that print differently (with `ALTERED_NUMBERS`) and the written order of
 * objects with a key of digits that JavaScript lists in another order (with `DIGIT_KEYS`).
 * A repeated key: JSON.parse kept the last value, and the last occurrence is walked last, so what it
 * records (or drops: a plain number drops an earlier record) stands; an earlier occurrence of another
 * shape than the kept value (an object, then a text) is stepped over unread, so it costs the rest of the
 * payload none of its numbers' texts. An object whose keys JavaScript lists in another order than the
 * text gets the text's order (a repeated key where it first appears, as `JSON.parse` keeps it); the
 * last occurrence of a repeated key, the kept one, decides.
 *
 * One loop with its own stack, allocating only what it keeps: a payload can hold a hundred thousand
 * numbers like `1.0`, each recorded in its container's one `Kept` (by index in an array), the containers
 * around it marked once per visit, not once per number; a key is read only where it is needed, and an
 * object's keys are listed again (from its text) only when they are out of JavaScript's order.
 */
function record(text: string, root: object, found: number): void {
  const numbers = (found & ALTERED_NUMBERS) !== 0;
  const orders = (found & DIGIT_KEYS) !== 0;
  const length = text.length;
  /** The containers the walk is in, outermost first; per container, what the walk knows of it. */
  const containers: object[] = [];
  /** Next index of an array; -1 for an object. */
  const indices: number[] = [];
  /** The container's `Kept`: null until looked up, undefined when it has none. */
  const keeps: (Kept | null | undefined)[] = [];
  /** With `orders`, an object's: where its text starts, and its last key that is an array index (-1: none yet). */
  const starts: number[] = [];
  const lastIndexKeys: number[] = [];
  /** With `orders`, an object's: `IN_ORDER`, `AFTER_NAMES` (a key that is no index came), or `OUT_OF_ORDER`. */
  const orderStates: number[] = [];
  /** `containers[0 .. marked)` are known to have a `Kept` (`INSIDE` at least): the slower serialization goes through them. */
  let marked = 0;
  let top = -1;

  const keptAt = (d: number): Kept | undefined => {
    let k = keeps[d];
    if (k === null) {
      k = Keeps.get(containers[d] as object);
      keeps[d] = k;
    }
    return k;
  };
  /** `containers[d]`'s `Kept`, made if it has none, with every container around it marked. */
  const keep = (d: number): Kept => {
    for (; marked < d; marked++) {
      if (keptAt(marked) === undefined) {
        Keeps.set(containers[marked] as object, INSIDE);
        keeps[marked] = INSIDE;
      }
    }
    let k = keptAt(d);
    if (k === undefined || k === INSIDE) {
      k = new Kept(undefined);
      Keeps.set(containers[d] as object, k);
      keeps[d] = k;
    }
    if (marked <= d) marked = d + 1;
    return k;
  };
  const push = (container: object, array: boolean, at: number): void => {
    top++;
    containers[top] = container;
    indices[top] = array ? 0 : -1;
    keeps[top] = null;
    if (orders && !array) {
      starts[top] = at;
      lastIndexKeys[top] = -1;
      orderStates[top] = IN_ORDER;
    }
  };
  /** Leaves the innermost container (its closing bracket already read). */
  const pop = (): void => {
    if (orders && indices[top] === -1) {
      // Keys in the order JavaScript lists them (array indices first, ascending) need nothing kept.
      const order =
        orderStates[top] === OUT_OF_ORDER
          ? writtenOrder(objectKeys(text, starts[top] as number), containers[top] as object)
          : undefined;
      if (order !== undefined) keep(top).order = order;
      else {
        const k = keptAt(top);
        if (k !== undefined && k.order !== undefined) k.order = undefined;
      }
    }
    top--;
    if (marked > top + 1) marked = top + 1;
  };
  const ws = (at: number): number => {
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
      else return at;
    }
  };
  /** The own value of `holder` at `name` (an earlier occurrence's `constructor` is not the prototype's). */
  const own = (holder: object, name: string): unknown =>
    Object.hasOwn(holder, name) ? (holder as Record<string, unknown>)[name] : undefined;

  let i = ws(0);
  push(root, Array.isArray(root), i);
  i++;
  // Each turn reads one member of the innermost container, or its end.
  while (top >= 0) {
    i = ws(i);
    let c = text.charCodeAt(i);
    if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      i++;
      pop();
      continue;
    }
    if (c === COMMA) {
      i = ws(i + 1);
      c = text.charCodeAt(i);
    }
    const holder = containers[top] as object;
    const index = indices[top] as number;
    /** An object's member: where its key's text starts and ends (quotes included); the key is read when needed. */
    let nameStart = 0;
    let nameEnd = 0;
    if (index === -1) {
      nameStart = i;
      nameEnd = skipString(text, i);
      if (nameEnd === -1) throw new Mismatch();
      if (orders && orderStates[top] !== OUT_OF_ORDER) {
        const key = arrayIndexKey(text, nameStart, nameEnd);
        const state = orderStates[top];
        if (key === -1) orderStates[top] = AFTER_NAMES;
        else if (state === AFTER_NAMES || key < (lastIndexKeys[top] as number))
          orderStates[top] = OUT_OF_ORDER;
        else lastIndexKeys[top] = key;
      }
      i = ws(ws(nameEnd) + 1); // past the colon
      c = text.charCodeAt(i);
    } else {
      indices[top] = index + 1;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const child =
        index === -1 ? own(holder, keyText(text, nameStart, nameEnd)) : (holder as unknown[])[index];
      const array = c === OPEN_BRACKET;
      if (typeof child !== "object" || child === null || Array.isArray(child) !== array) {
        // Only an earlier occurrence of a repeated key can disagree with the tree JSON.parse built.
        i = skipContainer(text, i);
        if (i === -1) throw new Mismatch();
      } else {
        push(child, array, i);
        i++;
      }
      continue;
    }
    if (c === QUOTE) {
      i = skipString(text, i);
      if (i === -1) throw new Mismatch();
      continue;
    }
    if (!isNumberStart(c)) {
      // true, false, null
      i += c === 0x66 /* f */ ? 5 : 4;
      continue;
    }
    const start = i;
    while (i < length && isNumberPart(text.charCodeAt(i))) i++;
    if (!numbers) continue;
    const plain = plainToken(text, start, i);
    // A plain number only drops what an earlier occurrence of its key recorded: nothing to look up without one.
    if (plain && keptAt(top)?.hasTexts() !== true) continue;
    const name = index === -1 ? keyText(text, nameStart, nameEnd) : "";
    const parsed = index === -1 ? own(holder, name) : (holder as unknown[])[index];
    // Not the kept value (an earlier occurrence of a repeated key): nothing to record.
    if (typeof parsed !== "number") continue;
    if (plain) {
      (keptAt(top) as Kept).dropText(index, name);
      continue;
    }
    const token = text.slice(start, i);
    // An earlier occurrence of a repeated key may hold another number than the kept one: what it records
    // is replaced or dropped by the kept occurrence, which comes later.
    if (!trailingZero(text, start, i) && String(parsed) === token) keptAt(top)?.dropText(index, name);
    else keep(top).setText(index, name, token);
  }
}

/**
 * The number token `text[start..end)` has a fraction ending in 0 (`1.0`, `12.50`) and no exponent: it
 * never prints back as written, which this tells without converting a number to text (most of the cost
 * of a body of such numbers).
 */
function trailingZero(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(end - 1) !== 0x30) return false;
  for (let k = end - 2; k > start; k--) {
    const c = text.charCodeAt(k);
    if (c === 0x2e /* . */) return true;
    if (!isDigit(c)) return false;
  }
  return false;
}

/** An object's keys so far all in the order JavaScript lists them: array indices, ascending, then the rest. */
const IN_ORDER = 0;
const AFTER_NAMES = 1;
const OUT_OF_ORDER = 2;

/** The key whose string token (quotes included) is `text[start..end)`. */
function keyText(text: string, start: number, end: number): string {
  for (let k = start + 1; k < end - 1; k++)
    if (text.charCodeAt(k) === BACKSLASH) return JSON.parse(text.slice(start, end)) as string;
  return text.slice(start + 1, end - 1);
}

/** Largest array index: JavaScript lists keys from "0" to this one first, in numeric order. */
const MAX_ARRAY_INDEX = 4294967294;

/** The array index the key token `text[start..end)` names (`"7"`, `"\u0037"`), or -1 when it names none. */
function arrayIndexKey(text: string, start: number, end: number): number {
  const size = end - start - 2;
  if (size < 1) return -1;
  let value = 0;
  for (let k = start + 1; k < end - 1; k++) {
    const c = text.charCodeAt(k);
    if (c === BACKSLASH) {
      const name = keyText(text, start, end);
      return /^(0|[1-9][0-9]{0,9})$/.test(name) && Number(name) <= MAX_ARRAY_INDEX ? Number(name) : -1;
    }
    if (!isDigit(c) || size > 10) return -1;
    value = value * 10 + (c - 0x30);
  }
  if (size > 1 && text.charCodeAt(start + 1) === 0x30) return -1; // "01" is a name, not an index
  return value <= MAX_ARRAY_INDEX ? value : -1;
}

/** The keys of the object whose text starts (with its brace) at `at`, as written, a repeated one each time. */
function objectKeys(text: string, at: number): string[] {
  const keys: string[] = [];
  const ws = (from: number): number => {
    let k = from;
    for (;;) {
      const c = text.charCodeAt(k);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) k++;
      else return k;
    }
  };
  let i = ws(at + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return keys;
  for (;;) {
    const end = skipString(text, i);
    if (end === -1) throw new Mismatch();
    keys.push(keyText(text, i, end));
    i = ws(ws(end) + 1);
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) i = skipContainer(text, i);
    else if (c === QUOTE) i = skipString(text, i);
    else if (isNumberStart(c)) while (i < text.length && isNumberPart(text.charCodeAt(i))) i++;
    else i += c === 0x66 /* f */ ? 5 : 4;
    if (i === -1) throw new Mismatch();
    i = ws(i);
    if (text.charCodeAt(i) !== COMMA) return keys;
    i = ws(i + 1);
  }
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
      record(text, parsed as object, found);
    } catch {
      // Not walkable (text and tree disagree, which a text JSON.parse took cannot do): what was
      // recorded up to there stands, each record being right on its own; the rest prints as JavaScript does.
    }
  }
  return parsed;
}

/** The text of `holder[key]`, a number: as the sender wrote it when known, else its JSON text. */
export function numberText(holder: unknown, key: string, value: number): string {
  if (typeof holder === "object" && holder !== null) {
    const text = keptText(holder, key);
    if (text !== undefined) return text;
  }
  return JSON.stringify(value);
}

/** `writeTree` met a value JSON.parse does not build (undefined, a function, a class instance, `toJSON`). */
class NotParsed extends Error {}

/**
 * `JSON.stringify(value, null, indent)` of a tree of what JSON.parse builds (plain objects and arrays,
 * strings, numbers, booleans, null), with the numbers and key orders kept for it, written directly: a
 * marker per number and a pass to swap them back cost ten to twenty times `JSON.stringify` on a body of
 * many numbers like `1.0`. Undefined for any other tree, which `stringifyJson` serializes the general way.
 */
function writeTree(value: object, indent: number | undefined): string | undefined {
  // JSON.stringify's gap: at most 10 spaces, none for 0 or less (V8 breaks lines for a fraction: left to it).
  if (indent !== undefined && !Number.isInteger(indent)) return undefined;
  const gap = indent === undefined ? "" : " ".repeat(Math.min(10, Math.max(0, indent)));
  const colon = gap === "" ? ":" : ": ";
  let out = "";
  /** Writes `node`; `kept`: the text kept for it when it is a number. */
  const write = (node: unknown, kept: string | undefined, pad: string): void => {
    if (typeof node === "string") out += JSON.stringify(node);
    else if (typeof node === "number") out += kept ?? JSON.stringify(node);
    else if (typeof node === "boolean") out += node ? "true" : "false";
    else if (node === null) out += "null";
    else if (typeof node !== "object") throw new NotParsed();
    else container(node, pad);
  };
  const container = (node: object, pad: string): void => {
    const prototype = Object.getPrototypeOf(node);
    const array = Array.isArray(node);
    if (
      (array ? prototype !== Array.prototype : prototype !== Object.prototype && prototype !== null) ||
      typeof (node as { toJSON?: unknown }).toJSON === "function"
    )
      throw new NotParsed();
    const nodeKept = Keeps.get(node);
    const inner = pad + gap;
    const open = gap === "" ? "" : `\n${inner}`;
    const separator = gap === "" ? "," : `,\n${inner}`;
    if (array) {
      const items = node as unknown[];
      if (items.length === 0) {
        out += "[]";
        return;
      }
      const texts = nodeKept?.items;
      out += `[${open}`;
      for (let i = 0; i < items.length; i++) {
        if (i > 0) out += separator;
        write(items[i], texts?.[i], inner);
      }
      out += gap === "" ? "]" : `\n${pad}]`;
      return;
    }
    const keys = nodeKept?.order ?? Object.keys(node);
    const named = nodeKept?.named !== undefined;
    if (keys.length === 0) {
      out += "{}";
      return;
    }
    out += `{${open}`;
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as string;
      if (k > 0) out += separator;
      out += JSON.stringify(key) + colon;
      const item = (node as Record<string, unknown>)[key];
      write(item, named && typeof item === "number" ? nodeKept?.text(key) : undefined, inner);
    }
    out += gap === "" ? "}" : `\n${pad}}`;
  };
  try {
    container(value, "");
  } catch (err) {
    if (err instanceof NotParsed) return undefined;
    throw err;
  }
  return out;
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
  if (typeof value !== "object" || value === null || !isTainted(value)) {
    return JSON.stringify(value, null, indent);
  }
  const written = writeTree(value, indent);
  if (written !== undefined) return written;
  const texts: string[] = [];
  /** view → the object it lists in the sender's order (the holder whose number texts are recorded). */
  const viewed = new Map<object, object>();
  const out = JSON.stringify(
    value,
    function (this: unknown, key: string, item: unknown) {
      if (typeof item === "object" && item !== null) {
        const order = Keeps.get(item)?.order;
        if (order === undefined) return item;
        const view = new Proxy(item, { ownKeys: () => [...order] });
        viewed.set(view, item);
        return view;
      }
      if (typeof item !== "number") return item;
      const holder = viewed.get(this as object) ?? (this as object);
      const text = keptText(holder, key);
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
    const nodeKept = Keeps.get(node);
    const order = Array.isArray(node) ? undefined : nodeKept?.order;
    const keys = Array.isArray(node) ? undefined : (order ?? Object.keys(node));
    const size = keys === undefined ? (node as unknown[]).length : keys.length;
    const copyKept = nodeKept === undefined ? undefined : new Kept(undefined);
    const copy: unknown[] | Record<string, unknown> = keys === undefined ? [] : {};
    for (let i = 0; i < size && written <= atLeast; i++) {
      const key = keys === undefined ? String(i) : (keys[i] as string);
      const item = (node as Record<string, unknown>)[key];
      written += (i > 0 ? 1 : 0) + lineStart(depth) + surely(item, node, key);
      if (keys !== undefined) written += 3 + Math.floor(key.length / 2) + (indent > 0 ? 1 : 0);
      const text = nodeKept?.text(key);
      if (text !== undefined) copyKept?.setText(keys === undefined ? i : -1, key, text);
      const itemCopy = head(item, depth + 1);
      if (keys === undefined) (copy as unknown[]).push(itemCopy);
      else
        Object.defineProperty(copy, key, {
          value: itemCopy,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    if (copyKept !== undefined) {
      copyKept.order = order?.slice(0, Object.keys(copy).length);
      Keeps.set(copy, copyKept);
    }
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
  const objectKept = Keeps.get(object);
  if (objectKept === undefined) return copy;
  const order = objectKept.order;
  const copyKept = new Kept(
    order === undefined
      ? undefined
      : [...order, ...Object.keys(extra).filter((key) => !Object.hasOwn(object, key))],
  );
  for (const [key, text] of objectKept.namedTexts())
    if (!Object.hasOwn(extra, key)) copyKept.setText(-1, key, text);
  Keeps.set(copy, copyKept);
  return copy;
}

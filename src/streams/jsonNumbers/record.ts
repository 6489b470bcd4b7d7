/**
 * The walk beside `JSON.parse`'s tree that records the numbers and key orders to keep (what `scan.ts`
 * found).
 */
import { INSIDE, Keeps, Kept } from "./kept.js";
import {
  ALTERED_NUMBERS,
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  DIGIT_KEYS,
  isDigit,
  isNumberPart,
  isNumberStart,
  OPEN_BRACE,
  OPEN_BRACKET,
  plainToken,
  QUOTE,
  skipString,
} from "./scan.js";

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
 * around it marked once per visit, not once per number; a key is read only where it is needed. With
 * `orders`, where each key of the open objects starts and ends is kept on one shared stack as the walk
 * passes it, so an object whose keys are out of JavaScript's order has its keys listed from there when it
 * closes, never by reading its text again (which, for such objects nested inside each other, read each
 * one's text once per object around it: a 1 MiB body of them took 50 times `JSON.parse`'s time).
 */
export function record(text: string, root: object, found: number): void {
  const numbers = (found & ALTERED_NUMBERS) !== 0;
  const orders = (found & DIGIT_KEYS) !== 0;
  const length = text.length;
  /** The containers the walk is in, outermost first; per container, what the walk knows of it. */
  const containers: object[] = [];
  /** Next index of an array; -1 for an object. */
  const indices: number[] = [];
  /** The container's `Kept`: null until looked up, undefined when it has none. */
  const keeps: (Kept | null | undefined)[] = [];
  /** With `orders`, an object's last key that is an array index (-1: none yet). */
  const lastIndexKeys: number[] = [];
  /**
   * With `orders`: where each key of the open objects starts and ends (its token, quotes included), in the
   * order written, innermost object last; an object's keys begin at its `keyBases` entry.
   */
  const keyBounds: number[] = [];
  const keyBases: number[] = [];
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
  const push = (container: object, array: boolean): void => {
    top++;
    containers[top] = container;
    indices[top] = array ? 0 : -1;
    keeps[top] = null;
    if (orders && !array) {
      keyBases[top] = keyBounds.length;
      lastIndexKeys[top] = -1;
      orderStates[top] = IN_ORDER;
    }
  };
  /** Leaves the innermost container (its closing bracket already read). */
  const pop = (): void => {
    if (orders && indices[top] === -1) {
      // Keys in the order JavaScript lists them (array indices first, ascending) need nothing kept.
      const base = keyBases[top] as number;
      const order =
        orderStates[top] === OUT_OF_ORDER
          ? writtenOrder(writtenKeys(text, keyBounds, base), containers[top] as object)
          : undefined;
      keyBounds.length = base;
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
  push(root, Array.isArray(root));
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
      if (orders) keyBounds.push(nameStart, nameEnd);
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
        push(child, array);
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

/** The keys whose tokens `bounds` holds from `base` on (start, end, start, end, ...), as written, a repeated one each time. */
function writtenKeys(text: string, bounds: readonly number[], base: number): string[] {
  const keys: string[] = [];
  for (let k = base; k < bounds.length; k += 2)
    keys.push(keyText(text, bounds[k] as number, bounds[k + 1] as number));
  return keys;
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

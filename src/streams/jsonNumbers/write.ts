/** Serializing with the kept numbers and key orders: `stringifyJson`, `stringifyJsonHead`, `extendObject`. */
import { randomBytes } from "node:crypto";
import { firstCharacters } from "../firstCharacters.js";
import { isTainted, Keeps, Kept, keptText } from "./kept.js";
import { numberText } from "./parse.js";

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
 * visited and kept in the order the sender wrote them, as `stringifyJson` prints them. A string (value or
 * key) longer than `atLeast + 1` characters is copied as its first `atLeast + 1`: each writes at least one
 * character, so the text agrees that far, and a body's one long string (a diff, a log of megabytes) is not
 * escaped whole to keep its first few thousand characters.
 */
export function stringifyJsonHead(value: unknown, indent: number, atLeast: number): string | undefined {
  // A value whose whole text is short (a nested `{pull_request.user}`, a small body's dump) is written
  // whole: cheaper than copying its start first.
  if (!longerThan(value, indent, Math.max(WHOLE_UP_TO, 4 * atLeast))) return stringifyJson(value, indent);
  let written = 0;
  const lineStart = (depth: number) => (indent > 0 ? 1 + indent * (depth + 1) : 0);
  const surely = (item: unknown, holder: object, key: string): number => {
    if (typeof item === "string") return 2 + Math.floor(item.length / 2);
    if (typeof item === "number") return numberText(holder, key, item).length;
    if (typeof item === "boolean") return item ? 4 : 5;
    return item === null ? 4 : 1;
  };
  const head = (node: unknown, depth: number): unknown => {
    if (typeof node === "string") return firstCharacters(node, atLeast + 1);
    if (typeof node !== "object" || node === null) return node;
    const nodeKept = Keeps.get(node);
    const order = Array.isArray(node) ? undefined : nodeKept?.order;
    const keys = Array.isArray(node) ? undefined : (order ?? Object.keys(node));
    const size = keys === undefined ? (node as unknown[]).length : keys.length;
    const copyKept = nodeKept === undefined ? undefined : new Kept(undefined);
    const copy: unknown[] | Record<string, unknown> = keys === undefined ? [] : {};
    /** The copy's keys in the order written: a long key cut (always the last one copied, as it ends the copy). */
    const copyOrder: string[] | undefined = order === undefined ? undefined : [];
    for (let i = 0; i < size && written <= atLeast; i++) {
      const key = keys === undefined ? String(i) : (keys[i] as string);
      const item = (node as Record<string, unknown>)[key];
      written += (i > 0 ? 1 : 0) + lineStart(depth) + surely(item, node, key);
      if (keys !== undefined) written += 3 + Math.floor(key.length / 2) + (indent > 0 ? 1 : 0);
      const copyKey = keys === undefined ? key : firstCharacters(key, atLeast + 1);
      copyOrder?.push(copyKey);
      const text = nodeKept?.text(key);
      if (text !== undefined) copyKept?.setText(keys === undefined ? i : -1, copyKey, text);
      const itemCopy = head(item, depth + 1);
      if (keys === undefined) (copy as unknown[]).push(itemCopy);
      // `__proto__` set by assignment would set the copy's prototype, not a key of it.
      else if (copyKey !== "__proto__") (copy as Record<string, unknown>)[copyKey] = itemCopy;
      else
        Object.defineProperty(copy, copyKey, {
          value: itemCopy,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    if (copyKept !== undefined) {
      copyKept.order = copyOrder;
      Keeps.set(copy, copyKept);
    }
    return copy;
  };
  return stringifyJson(head(value, 0), indent);
}

/**
 * Up to about this many characters (`longerThan`'s count), `stringifyJsonHead` writes a value whole rather
 * than copying its start: a nested `{repository}` or a small body is written faster whole; past it, a copy
 * of the start is cheaper, and a body of megabytes is never written whole.
 */
const WHOLE_UP_TO = 16 * 1024;

/**
 * Whether the JSON text of `value` at `indent` is longer than `budget` characters, counting each string
 * and key by its length (its escapes, at most six characters for one, not counted: a text counted within
 * `budget` is at most six times as long) and each number as long as a double's text can be (or its kept
 * text), read no further than where the count passes `budget`, and allocating nothing for plain objects.
 */
function longerThan(value: unknown, indent: number, budget: number): boolean {
  let left = budget;
  const gap = Number.isInteger(indent) ? Math.min(10, Math.max(0, indent)) : 10;
  const NUMBER = 25;
  const over = (node: unknown, text: string | undefined, depth: number): boolean => {
    if (typeof node === "string") left -= 2 + node.length;
    else if (typeof node === "number") left -= text?.length ?? NUMBER;
    else if (typeof node !== "object" || node === null) left -= 5;
    else {
      const line = gap === 0 ? 0 : 1 + gap * (depth + 1);
      left -= 2 + line;
      const kept = Keeps.get(node);
      if (Array.isArray(node)) {
        const texts = kept?.items;
        for (let i = 0; i < node.length; i++) {
          left -= 1 + line;
          if (left < 0 || over(node[i], texts?.[i], depth + 1)) return true;
        }
      } else {
        for (const key in node) {
          left -= 4 + line + key.length;
          const item = (node as Record<string, unknown>)[key];
          if (left < 0 || over(item, typeof item === "number" ? kept?.text(key) : undefined, depth + 1))
            return true;
        }
      }
    }
    return left < 0;
  };
  return over(value, undefined, 0);
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

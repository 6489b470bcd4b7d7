/** Serializing with the kept numbers and key orders: `stringifyJson`, `stringifyJsonHead`, `extendObject`. */
import { randomBytes } from "node:crypto";
import { firstCharacters } from "../firstCharacters.js";
import { isTainted, Keeps, Kept, keptText } from "./kept.js";
import { numberText } from "./parse.js";

/** A container `writeTree` is inside: what is left of it to write. */
interface Open {
  readonly node: object;
  /** An object's keys in the order written; undefined for an array. */
  readonly keys: readonly string[] | undefined;
  readonly size: number;
  readonly kept: Kept | undefined;
  /** Whether its kept texts are by key (an object's numbers as written). */
  readonly named: boolean;
  /** What goes before its first item, and between two. */
  readonly first: string;
  readonly separator: string;
  /** What closes it once it wrote an item (an object whose every value JSON leaves out is `{}`). */
  readonly close: string;
  readonly inner: string;
  next: number;
  wrote: boolean;
}

/** What `JSON.stringify` leaves out of an object, and writes as null in an array. */
const unwritten = (item: unknown): boolean =>
  item === undefined || typeof item === "function" || typeof item === "symbol";

/**
 * `JSON.stringify(value, null, indent)` of a tree of what JSON.parse builds (plain objects and arrays,
 * strings, numbers, booleans, null; an undefined value of a change, which JSON leaves out), with the numbers and key orders kept for it (none with `plain`),
 * written directly: a marker per number and a pass to swap them back cost ten to twenty times
 * `JSON.stringify` on a body of many numbers like `1.0`. Undefined for any other tree, which
 * `stringifyJson` serializes the general way. Walked with a stack of its own, not the call stack: a tree
 * nested thousands of levels deep (which JSON.parse reads) is written as any other.
 */
function writeTree(value: object, indent: number | undefined, plain = false): string | undefined {
  // JSON.stringify's gap: at most 10 spaces, none for 0 or less (V8 breaks lines for a fraction: left to it).
  if (indent !== undefined && !Number.isInteger(indent)) return undefined;
  const gap = indent === undefined ? "" : " ".repeat(Math.min(10, Math.max(0, indent)));
  const colon = gap === "" ? ":" : ": ";
  let out = "";
  const stack: Open[] = [];
  /** Writes `node`; `kept`: the text kept for it when it is a number. */
  const write = (node: unknown, kept: string | undefined, pad: string): boolean => {
    if (typeof node === "string") out += JSON.stringify(node);
    else if (typeof node === "number") out += kept ?? JSON.stringify(node);
    else if (typeof node === "boolean") out += node ? "true" : "false";
    else if (node === null) out += "null";
    else if (typeof node !== "object") return false;
    else return open(node, pad);
    return true;
  };
  /** Writes the start of a container (all of an empty one) and puts it on the stack. */
  const open = (node: object, pad: string): boolean => {
    const prototype = Object.getPrototypeOf(node);
    const array = Array.isArray(node);
    if (
      (array ? prototype !== Array.prototype : prototype !== Object.prototype && prototype !== null) ||
      typeof (node as { toJSON?: unknown }).toJSON === "function"
    )
      return false;
    const kept = plain ? undefined : Keeps.get(node);
    const keys = array ? undefined : (kept?.order ?? Object.keys(node));
    const size = keys === undefined ? (node as unknown[]).length : keys.length;
    if (size === 0) {
      out += array ? "[]" : "{}";
      return true;
    }
    const inner = pad + gap;
    out += array ? "[" : "{";
    stack.push({
      node,
      keys,
      size,
      kept,
      named: kept?.named !== undefined,
      first: gap === "" ? "" : `\n${inner}`,
      separator: gap === "" ? "," : `,\n${inner}`,
      close: (gap === "" ? "" : `\n${pad}`) + (array ? "]" : "}"),
      inner,
      next: 0,
      wrote: false,
    });
    return true;
  };
  if (!open(value, "")) return undefined;
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    if (top.next === top.size) {
      out += top.wrote ? top.close : "}";
      stack.pop();
      continue;
    }
    const i = top.next++;
    const key = top.keys?.[i] as string;
    const item =
      top.keys === undefined ? (top.node as unknown[])[i] : (top.node as Record<string, unknown>)[key];
    if (top.keys !== undefined && unwritten(item)) continue;
    out += top.wrote ? top.separator : top.first;
    top.wrote = true;
    let written = true;
    if (top.keys === undefined) {
      if (unwritten(item)) out += "null";
      else written = write(item, top.kept?.items?.[i], top.inner);
    } else {
      out += JSON.stringify(key) + colon;
      written = write(
        item,
        top.named && typeof item === "number" ? top.kept?.text(key) : undefined,
        top.inner,
      );
    }
    if (!written) return undefined;
  }
  return out;
}

/** A walk on the call stack that ran out of it (`JSON.stringify` of a value nested some thousands of levels deep). */
const outOfStack = (err: unknown): boolean =>
  err instanceof RangeError && err.message.includes("Maximum call stack size exceeded");

/**
 * `JSON.stringify(value)` of a tree JSON.parse built, the numbers as JavaScript writes them (nothing kept is
 * used), at any depth: `JSON.stringify` walks the call stack, which runs out some thousands of levels down
 * (about 4,500 in Node 20 with its default stack), and such a tree is then written with a stack of its own.
 */
export function stringifyPlain(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!outOfStack(err) || typeof value !== "object" || value === null) throw err;
    const written = writeTree(value, undefined, true);
    if (written === undefined) throw err;
    return written;
  }
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
  if (typeof value !== "object" || value === null) return JSON.stringify(value, null, indent);
  if (!isTainted(value)) {
    try {
      return JSON.stringify(value, null, indent);
    } catch (err) {
      // Nested deeper than JSON.stringify's walk on the call stack goes: written with a stack of its own.
      if (!outOfStack(err)) throw err;
      const written = writeTree(value, indent, true);
      if (written === undefined) throw err;
      return written;
    }
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

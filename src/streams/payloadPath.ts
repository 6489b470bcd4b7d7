import { numberText, stringifyJson } from "./jsonNumbers/index.js";

/** Dotted-path lookup into a parsed JSON payload, shared by filters, templates and coalesce keys. */

/** `holder[key]` is the value found (for numbers kept as the sender wrote them: streams/jsonNumbers/). */
export type PathLookup = { found: true; value: unknown; holder?: object; key?: string } | { found: false };

const NOT_FOUND: PathLookup = { found: false };

/**
 * Walks `a.b.c` through plain objects (own keys only, so `__proto__` or `constructor` never reach
 * Object.prototype) and arrays (a segment of decimal digits is an index, e.g. `commits.0.id`).
 * An empty path or an empty segment (`a..b`, `.a`) is never found.
 */
export function lookupPath(root: unknown, dotted: string): PathLookup {
  if (dotted.length === 0) return NOT_FOUND;
  let segments = splitPaths.get(dotted);
  if (segments === undefined) {
    segments = dotted.split(".");
    if (splitPaths.size < MAX_SPLIT_PATHS) splitPaths.set(dotted, segments);
  }
  return lookupSegments(root, segments);
}

/**
 * The paths looked up come from config (filters, coalesce keys), the same few on every request: each is
 * split once. Bounded, so paths that vary could never grow it without limit.
 */
const splitPaths = new Map<string, readonly string[]>();
const MAX_SPLIT_PATHS = 1000;

const INDEX = /^(0|[1-9][0-9]*)$/;

/** `lookupPath` on a path already split at its dots (callers that look the same path up often keep the split). */
export function lookupSegments(root: unknown, segments: readonly string[]): PathLookup {
  let current: unknown = root;
  let holder: object | undefined;
  for (const segment of segments) {
    if (segment.length === 0) return NOT_FOUND;
    if (Array.isArray(current)) {
      if (!INDEX.test(segment)) return NOT_FOUND;
      const index = Number(segment);
      if (index >= current.length) return NOT_FOUND;
      holder = current;
      current = current[index];
    } else if (isPlainRecord(current)) {
      if (!Object.hasOwn(current, segment)) return NOT_FOUND;
      holder = current;
      current = current[segment];
    } else {
      return NOT_FOUND;
    }
  }
  return holder === undefined
    ? { found: true, value: current }
    : { found: true, value: current, holder, key: segments.at(-1) as string };
}

/** An integer a float cannot hold exactly: its text, not its value, says which one the sender meant. */
export function isUnsafeInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The text of a payload value as filters (`regex`, `in_file`, `contains` on strings) and list files
 * see it: strings verbatim, everything else as compact JSON (`42`, `true`, `null`, `{"a":1}`).
 */
export function valueToText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

/** `valueToText` of a found value, with numbers and nested values as the sender wrote them (`1.0`). */
export function foundText(hit: { value: unknown; holder?: object; key?: string }): string {
  const { value } = hit;
  if (typeof value === "string") return value;
  if (typeof value === "number") return numberText(hit.holder, hit.key ?? "", value);
  return stringifyJson(value) ?? String(value);
}

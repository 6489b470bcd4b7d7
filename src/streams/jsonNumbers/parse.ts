/**
 * `parseJson`, which keeps numbers and key orders as the sender wrote them, and `numberText`, which reads
 * one back.
 */
import { keptText } from "./kept.js";
import { record } from "./record.js";
import { ALTERED_NUMBERS, DIGIT_KEYS, NESTED_TOO_DEEP, scanJsonText } from "./scan.js";

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
 * (`1.0`, `1e3`, integers past 2^53). Throws like `JSON.parse` on invalid JSON, and `JsonTooDeep` for
 * nesting deeper than `maxDepth` (the walk that remembers has its own stack: a caller that renders none of
 * the tree may pass Infinity).
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const found = scanJsonText(text, maxDepth);
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

import { firstCharacters } from "./firstCharacters.js";
import { stringifyJsonHead } from "./jsonNumbers/index.js";
import { foundText, lookupSegments } from "./payloadPath.js";
import { RECIPIENT_KEYS } from "./recipientKeys.js";

/** Prompt and `deliver_extra` templates. Pure and single-pass. */

export const NESTED_VALUE_LIMIT = 2000;
export const RAW_DUMP_LIMIT = 4000;
export const RAW_PLACEHOLDER = "__raw__";

/**
 * `{name}` or `{a.b.c}`: segments of any characters but whitespace, braces and dots (payload keys such
 * as `@timestamp` or `título` too), joined by single dots. Doubled braces (`{{x}}`, a brace directly
 * before and after) are another template language's syntax, not a placeholder, so they pass through,
 * as do `{a b}`, `{ }`, `{x.}`; a brace on one side only is ordinary text beside a placeholder
 * (`{"n": {n}}`, a prompt showing JSON). A placeholder whose path is not in the payload (`{#if}`,
 * `{x!}`) stays as written (rule 2).
 */
const PLACEHOLDER = /\{([^\s{}.]+(?:\.[^\s{}.]+)*)\}/g;

/** `{{x}}`: the placeholder-shaped text at `start..end` sits inside doubled braces. */
function inDoubledBraces(template: string, start: number, end: number): boolean {
  return template.charCodeAt(start - 1) === 0x7b && template.charCodeAt(end) === 0x7d;
}

/**
 * The whole payload as 2-space indented JSON, truncated at 4000 characters (rules 4 and 5). Only that much
 * is written: indented in full, a large body can be more text than a string may hold.
 */
export function rawDump(payload: unknown): string {
  return firstCharacters(stringifyJsonHead(payload, 2, RAW_DUMP_LIMIT) ?? "null", RAW_DUMP_LIMIT);
}

/**
 * Strings as-is; numbers as the sender wrote them (`1.0` stays `1.0`); booleans and null as JSON text;
 * objects and arrays as compact JSON, capped (only the start the cap keeps is written: a push's list of
 * thousands of commits is not serialized whole to show 2000 characters of it).
 */
function valueText(hit: { value: unknown; holder?: object; key?: string }): string {
  const { value } = hit;
  if (typeof value !== "object" || value === null) return foundText(hit);
  return firstCharacters(stringifyJsonHead(value, 0, NESTED_VALUE_LIMIT) ?? "null", NESTED_VALUE_LIMIT);
}

/** A template split once into literal text and placeholders (`segments` undefined: `{__raw__}`). */
interface Compiled {
  /** Literal text around the placeholders: one more entry than `placeholders`. */
  readonly literals: readonly string[];
  readonly placeholders: ReadonlyArray<{ readonly literal: string; readonly segments?: readonly string[] }>;
}

const COMPILED_CACHE_LIMIT = 512;
const compiledCache = new Map<string, Compiled>();

/** Templates come from the configuration (a handful), so each is parsed once, not per request. */
function compile(template: string): Compiled {
  const cached = compiledCache.get(template);
  if (cached !== undefined) return cached;
  const literals: string[] = [];
  const placeholders: Array<{ literal: string; segments?: readonly string[] }> = [];
  let at = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (inDoubledBraces(template, match.index, match.index + match[0].length)) continue;
    const path = match[1] as string;
    literals.push(template.slice(at, match.index));
    placeholders.push(
      path === RAW_PLACEHOLDER ? { literal: match[0] } : { literal: match[0], segments: path.split(".") },
    );
    at = match.index + match[0].length;
  }
  literals.push(template.slice(at));
  const compiled = { literals, placeholders };
  if (compiledCache.size >= COMPILED_CACHE_LIMIT) compiledCache.clear();
  compiledCache.set(template, compiled);
  return compiled;
}

/**
 * `{event_type}` names the resolved event type (as in filters) when the payload has no such key: a GitHub
 * body has no `event_type`, its type comes in `X-GitHub-Event`.
 */
const EVENT_TYPE = "event_type";

/** Substitutes every placeholder once; text taken from the payload is never expanded again. */
export function substitute(template: string, payload: unknown, event?: string): string {
  return substituteNoting(template, payload, event, undefined);
}

/** Set by `substituteNoting` when a placeholder stayed as written (the payload has no such field). */
interface Gaps {
  left: boolean;
}

/** `substitute`, marking `gaps` when it leaves a placeholder as written. */
function substituteNoting(
  template: string,
  payload: unknown,
  event: string | undefined,
  gaps: Gaps | undefined,
): string {
  const { literals, placeholders } = compile(template);
  let out = literals[0] as string;
  for (let i = 0; i < placeholders.length; i++) {
    const { literal, segments } = placeholders[i] as Compiled["placeholders"][number];
    if (segments === undefined) out += rawDump(payload);
    else {
      const hit = lookupSegments(payload, segments);
      if (hit.found) out += valueText(hit);
      else if (event !== undefined && segments.length === 1 && segments[0] === EVENT_TYPE) out += event;
      else {
        out += literal;
        if (gaps !== undefined) gaps.left = true;
      }
    }
    out += literals[i + 1] as string;
  }
  return out;
}

/** No prompt (undefined or empty) → the default dump (rule 5); otherwise the substituted template. */
export function renderTemplate(template: string | undefined, payload: unknown, event?: string): string {
  if (template === undefined || template.length === 0) return rawDump(payload);
  return substitute(template, payload, event);
}

/**
 * A recipient's value (RECIPIENT_KEYS) rendered with each `${NAME}` kept as written: a variable of `.env`
 * that nothing set, whose `{NAME}` the payload must not fill (a body with `"OPS_MAIL": "x@evil.org"`
 * would pick the address an unset `to: ${OPS_MAIL}` sends to).
 */
function substituteRecipient(
  template: string,
  payload: unknown,
  event: string | undefined,
  gaps: Gaps,
): string {
  if (!template.includes("${")) return substituteNoting(template, payload, event, gaps);
  return template
    .split(/(\$\{[^{}]*\})/)
    .map((piece, i) => {
      if (i % 2 === 0) return substituteNoting(piece, payload, event, gaps);
      // A variable nothing set names no recipient either: the value is as unfilled as a missing field's.
      gaps.left = true;
      return piece;
    })
    .join("");
}

const NO_KEYS: readonly string[] = Object.freeze([]);

/** A route's `deliver_extra` rendered against an event's payload. */
export interface RenderedExtra {
  readonly extra: Record<string, string>;
  /**
   * The keys whose template left a placeholder as written (its path not in the payload): what tells a
   * recipient the event did not fill from one the event filled with text in braces (`{team}`).
   */
  readonly unfilled: readonly string[] | undefined;
}

/** Reused by each rendering (it runs to its end synchronously): no object per event. */
const GAPS: Gaps = { left: false };

/** `deliver_extra`: string values are templates; numbers and booleans become their text. */
export function renderExtra(
  extra: Readonly<Record<string, string | number | boolean>> | undefined,
  payload: unknown,
  event?: string,
): RenderedExtra {
  const out: Record<string, string> = {};
  const entries = extra === undefined ? undefined : Object.entries(extra);
  // No key, nothing to judge: none noted (a run record without the list is judged by its values' text).
  if (entries === undefined || entries.length === 0) return { extra: out, unfilled: undefined };
  let unfilled: string[] | undefined;
  for (const [key, value] of entries) {
    GAPS.left = false;
    // A lone surrogate from the payload is U+FFFD, as in a message's text: an id holding one cannot be
    // percent-encoded into a request path, nor read by a platform from a JSON body.
    if (typeof value !== "string") out[key] = String(value);
    else if (RECIPIENT_KEYS.includes(key))
      out[key] = substituteRecipient(value, payload, event, GAPS).toWellFormed();
    else out[key] = substituteNoting(value, payload, event, GAPS).toWellFormed();
    if (GAPS.left) {
      unfilled ??= [];
      unfilled.push(key);
    }
  }
  return { extra: out, unfilled: unfilled ?? NO_KEYS };
}

/**
 * The placeholders of `template` that `payload` leaves unfilled (the paths, in order, each once): what
 * `substitute` leaves as written. For messages to the user (a test event's note), never on a request's path.
 */
export function unfilledPlaceholders(template: string, payload: unknown, event?: string): string[] {
  const missing: string[] = [];
  for (const { segments } of compile(template).placeholders) {
    if (segments === undefined || lookupSegments(payload, segments).found) continue;
    if (event !== undefined && segments.length === 1 && segments[0] === EVENT_TYPE) continue;
    const path = segments.join(".");
    if (!missing.includes(path)) missing.push(path);
  }
  return missing;
}

import type { Filter, Scalar } from "../config/sections/filters.js";
import {
  foundText,
  isPlainRecord,
  isUnsafeInteger,
  lookupPath,
  type PathLookup,
  valueToText,
} from "./payloadPath.js";
import { compiled } from "./regex.js";

export { regexProblem, toRe2 } from "./regex.js";

/**
 * Payload filters. Pure apart from `deps.readList`; never throws. A leaf that cannot be evaluated
 * (unreadable `in_file` list, invalid `regex`) is unknown, and so is `not` of it; `all`/`any` are decided
 * by their other members when those decide them whatever the unknown one says (`any` with a member that
 * matches, `all` with one that does not), else unknown too. A top-level filter that stays unknown does
 * not match (fails closed), so a broken blocklist never lets everything through, and the order of the
 * members of a group never changes the answer.
 */

export interface FilterSubject {
  payload: unknown;
  event: string | undefined;
  headers: Readonly<Record<string, string>>;
}

export interface FilterDeps {
  /** The entries of an `in_file` list; throws when the file cannot be read. */
  readList(path: string): ReadonlySet<string>;
}

const NOT_FOUND: PathLookup = { found: false };

class Unevaluable extends Error {}

/**
 * `event` / `event_type` → the resolved event type; `headers.<Name>` → a header, case-insensitively;
 * `payload.x` → `x` inside a top-level `payload` object when the body has one, else at the body root;
 * `payload` → the body's `payload` field of any type when it has one, else the whole body;
 * anything else → a path from the body root.
 */
const HEADER_FIELD = "headers.";

/** The request header a filter field names (`headers.<Name>`), lower-cased as the gateway keeps them. */
function headerNamed(field: string): string | undefined {
  return field.startsWith(HEADER_FIELD) ? field.slice(HEADER_FIELD.length).toLowerCase() : undefined;
}

export function resolveField(field: string, subject: FilterSubject): PathLookup {
  if (field === "event" || field === "event_type") {
    return subject.event === undefined ? NOT_FOUND : { found: true, value: subject.event };
  }
  const name = headerNamed(field);
  if (name !== undefined) {
    const value = Object.hasOwn(subject.headers, name) ? subject.headers[name] : undefined;
    return value === undefined ? NOT_FOUND : { found: true, value };
  }
  if (field === "payload") {
    // The body's own `payload` field, whatever it holds (`"text"`, a list); without one, the whole body.
    const root = subject.payload;
    return isPlainRecord(root) && Object.hasOwn(root, "payload")
      ? { found: true, value: root.payload, holder: root, key: "payload" }
      : { found: true, value: root };
  }
  if (field.startsWith("payload.")) {
    const root = subject.payload;
    const inner = isPlainRecord(root) && isPlainRecord(root.payload) ? root.payload : root;
    return lookupPath(inner, field.slice("payload.".length));
  }
  return lookupPath(subject.payload, field);
}

/** An integer too large for a number: config/load.ts keeps such a YAML value as its digits. */
const BIG_INTEGER = /^-?[0-9]{16,}$/;

/**
 * JSON equality of scalars: `1` and `"1"` differ, as do `true` and `"true"`. Except an integer past 2^53
 * (a 64-bit id written unquoted in YAML arrives as its digits): it equals a payload number the sender
 * wrote with the same digits, which a float could not tell from its neighbours.
 */
function sameScalar(value: unknown, expected: Scalar, written: () => string): boolean {
  if (value === expected) return true;
  return (
    typeof value === "number" &&
    typeof expected === "string" &&
    BIG_INTEGER.test(expected) &&
    !Number.isSafeInteger(Number(expected)) &&
    written() === expected
  );
}

/**
 * A substring of a string (a number needle is its text), a member of a list (as `equals`), a key of a
 * mapping. `null` is no text: it is a member of a list only, never inside `"nullable"` or the key `"null"`.
 */
function contains(value: unknown, needle: Scalar): boolean {
  if (Array.isArray(value))
    return value.some((item, i) =>
      sameScalar(item, needle, () => foundText({ value: item, holder: value, key: String(i) })),
    );
  if (needle === null) return false;
  if (typeof value === "string") return value.includes(valueToText(needle));
  if (isPlainRecord(value)) return Object.hasOwn(value, valueToText(needle));
  return false;
}

function inFile(hit: PathLookup & { found: true }, path: string, deps: FilterDeps): boolean {
  let list: ReadonlySet<string>;
  try {
    list = deps.readList(path);
  } catch {
    throw new Unevaluable();
  }
  // A number matches as written (`1.0` in a text list) or as its value (`1.0` in the JSON list `[1]`);
  // an integer past 2^53 only by its digits.
  if (list.has(foundText(hit))) return true;
  return typeof hit.value === "number" && !isUnsafeInteger(hit.value) && list.has(valueToText(hit.value));
}

type LeafFilter = Extract<Filter, { field: string }>;

/**
 * Headers and the event type are text with no JSON type, so `equals: 5` or `in: [1, 2]` written
 * unquoted in YAML compares with the header's text ("5"), not never-matching as a number would.
 */
export function isTextField(field: string): boolean {
  return field === "event" || field === "event_type" || field.startsWith("headers.");
}

function leaf(filter: LeafFilter, hit: PathLookup, deps: FilterDeps, text: boolean): boolean {
  if ("exists" in filter) return hit.found === filter.exists;
  if ("missing" in filter) return !hit.found;
  const same = (value: unknown, expected: Scalar) =>
    text
      ? expected !== null && value === valueToText(expected)
      : sameScalar(value, expected, () => foundText(hit as PathLookup & { found: true }));
  // A missing field is "not equal" to anything: not_equals is exactly the negation of equals.
  if ("not_equals" in filter) return !(hit.found && same(hit.value, filter.not_equals));
  if (!hit.found) return false;
  const { value } = hit;
  if ("equals" in filter) return same(value, filter.equals);
  if ("contains" in filter) return contains(value, filter.contains);
  if ("in" in filter) return filter.in.some((item) => same(value, item));
  if ("in_file" in filter) return inFile(hit, filter.in_file, deps);
  if ("regex" in filter) {
    const re = compiled(filter.regex);
    if (re === null) throw new Unevaluable();
    // Numbers as the sender wrote them: `^\d+\.\d\d$` matches an amount sent as 10.50.
    return re.test(foundText(hit));
  }
  return false;
}

/** true, false, or undefined: unknown (a leaf that cannot be evaluated, or a group it leaves undecided). */
type Verdict = boolean | undefined;

/** `all` (decisive: false) or `any` (decisive: true): the decisive answer wins over an unknown member. */
function group(
  filters: readonly Filter[],
  decisive: boolean,
  subject: FilterSubject,
  deps: FilterDeps,
): Verdict {
  let unknown = false;
  for (const f of filters) {
    const verdict = evaluate(f, subject, deps);
    if (verdict === decisive) return decisive;
    if (verdict === undefined) unknown = true;
  }
  return unknown ? undefined : !decisive;
}

function evaluate(filter: Filter, subject: FilterSubject, deps: FilterDeps): Verdict {
  if ("all" in filter) return group(filter.all, false, subject, deps);
  if ("any" in filter) return group(filter.any, true, subject, deps);
  if ("not" in filter) {
    const inner = evaluate(filter.not, subject, deps);
    return inner === undefined ? undefined : !inner;
  }
  try {
    return leaf(filter, resolveField(filter.field, subject), deps, isTextField(filter.field));
  } catch {
    return undefined;
  }
}

export function matches(filter: Filter, subject: FilterSubject, deps: FilterDeps): boolean {
  return evaluate(filter, subject, deps) === true;
}

/** Every top-level filter must match; an empty list matches everything. */
export function matchesAll(filters: readonly Filter[], subject: FilterSubject, deps: FilterDeps): boolean {
  return firstRefusal(filters, subject, deps) < 0;
}

/**
 * Which of `filterRefusals(filters)` says why the event is ignored: the first top-level filter that does
 * not match, at its index when it did not match, at `filters.length` plus its index when it could not be
 * evaluated (an `in_file` list that cannot be read, a `regex` that cannot run); -1 when every one matches.
 */
export function firstRefusal(filters: readonly Filter[], subject: FilterSubject, deps: FilterDeps): number {
  for (let i = 0; i < filters.length; i++) {
    const verdict = evaluate(filters[i] as Filter, subject, deps);
    if (verdict !== true) return verdict === undefined ? filters.length + i : i;
  }
  return -1;
}

/** A filter as config.yaml writes it, in short: its field; a group by its kind and members. */
function describeFilter(filter: Filter): string {
  if ("all" in filter) return `all(${filter.all.map(describeFilter).join(", ")})`;
  if ("any" in filter) return `any(${filter.any.map(describeFilter).join(", ")})`;
  if ("not" in filter) return `not ${describeFilter(filter.not)}`;
  return filter.field;
}

const refusalsMade = new WeakMap<readonly Filter[], readonly string[]>();

/**
 * Why each top-level filter of `filters` ignored an event, for the delivery history (indexed as
 * `firstRefusal` gives): `filter action did not match` (the field as config.yaml writes it: config text,
 * never the sender's; a group by its members, `filter any(action, label.name) did not match`; `filters[1]`
 * added where two read the same), then, for each, `filter action could not be evaluated (...)`. Made once
 * per list, at its first ignore, and kept with it: later ignored requests pass a string that exists already.
 */
export function filterRefusals(filters: readonly Filter[]): readonly string[] {
  let made = refusalsMade.get(filters);
  if (made === undefined) {
    const described = filters.map(describeFilter);
    const named = described.map((text, i) =>
      described.indexOf(text) === described.lastIndexOf(text) ? text : `${text} (filters[${i}])`,
    );
    made = [
      ...named.map((name) => `filter ${name} did not match`),
      ...named.map(
        (name) =>
          `filter ${name} could not be evaluated (an in_file list it reads cannot be used, or a regex cannot run: the gateway warns of it at start and on reload)`,
      ),
    ];
    refusalsMade.set(filters, made);
  }
  return made;
}

/**
 * The request headers `filters` read (`headers.<Name>` fields, in `all`, `any` and `not` groups too),
 * lower-cased as the gateway keeps them, each once, in the order the filters name them.
 */
export function headersReadBy(filters: readonly Filter[]): string[] {
  const names = new Set<string>();
  const visit = (filter: Filter): void => {
    if ("all" in filter) filter.all.forEach(visit);
    else if ("any" in filter) filter.any.forEach(visit);
    else if ("not" in filter) visit(filter.not);
    else {
      const name = headerNamed(filter.field);
      if (name !== undefined) names.add(name);
    }
  };
  filters.forEach(visit);
  return [...names];
}

import type { Filter } from "../config/sections/filters.js";

/**
 * A header's value reaches svc without non-ASCII characters at its ends: uWS's parser drops every byte
 * from 0x80 at either end along with the whitespace (and the node server drops the same, so both read
 * alike). An `events` entry or a `headers.*` filter value that begins or ends with one is never what a
 * header brings, and is named at startup and by `svc config check`.
 */
const EDGE = /^[\s\u0080-\u{10ffff}]+|[\s\u0080-\u{10ffff}]+$/gu;
const NON_ASCII_EDGE = /^[\u0080-\u{10ffff}]|[\u0080-\u{10ffff}]$/u;

/** `value` as a header carrying it reads, when that differs from `value`. */
export function headerReading(value: string): string | undefined {
  return NON_ASCII_EDGE.test(value) ? value.replace(EDGE, "") : undefined;
}

const HOW = "a header's value reaches svc without non-ASCII characters at its ends";

/** The `events` entry's problem, or undefined: only an event type the body names (`event_type`) can match it. */
export function eventEdgeProblem(event: string): string | undefined {
  const read = headerReading(event);
  if (read === undefined) return undefined;
  return `matches only an event type the body names (event_type): ${HOW}, so X-Forge-Event: ${event} reads as ${JSON.stringify(read)}`;
}

/** `headers.*` filter values that no header's value can equal, each as `filters[...]...: <problem>`. */
export function headerFilterWarnings(filters: readonly Filter[] | undefined): string[] {
  const found: string[] = [];
  const walk = (filter: Filter, at: string): void => {
    if ("all" in filter) for (const [i, inner] of filter.all.entries()) walk(inner, `${at}.all[${i}]`);
    else if ("any" in filter) for (const [i, inner] of filter.any.entries()) walk(inner, `${at}.any[${i}]`);
    else if ("not" in filter) walk(filter.not, `${at}.not`);
    else if (filter.field.startsWith("headers.")) {
      const values: [string, unknown][] =
        "equals" in filter
          ? [["equals", filter.equals]]
          : "not_equals" in filter
            ? [["not_equals", filter.not_equals]]
            : "in" in filter
              ? filter.in.map((value, i) => [`in[${i}]`, value])
              : [];
      for (const [key, value] of values) {
        const read = typeof value === "string" ? headerReading(value) : undefined;
        if (read !== undefined)
          found.push(
            `${at}.${key}: ${JSON.stringify(value)} never equals ${filter.field}: ${HOW} (it would read ${JSON.stringify(read)}) — match the part inside with contains or regex`,
          );
      }
    }
  };
  for (const [i, filter] of (filters ?? []).entries()) walk(filter, `filters[${i}]`);
  return found;
}

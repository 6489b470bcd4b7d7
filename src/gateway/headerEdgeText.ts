import type { Filter } from "../config/sections/filters.js";
import { headerReading } from "../io/http/headerEdges.js";

/**
 * A header's value reaches svc without spaces, control or non-ASCII characters at its ends (`headerReading`):
 * an `events` entry or a `headers.*` filter value that begins or ends with one is never what a header brings,
 * and is named at startup and by `svc config check`.
 */
const HOW = "a header's value reaches svc without spaces, control or non-ASCII characters at its ends";

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

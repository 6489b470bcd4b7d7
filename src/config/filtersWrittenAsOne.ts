import type { Filter } from "./sections/filters.js";

/**
 * `filters` written as one mapping instead of a list is read as that one filter (sections/webhook.ts).
 * Messages name its keys as the file writes them, `filters.in_file`, never a `filters[0]` the file does
 * not have. Noted as a non-enumerable symbol on the parsed list, so it never shows in its keys or equality.
 */
const WRITTEN_AS_ONE = Symbol("filters written as one mapping");

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Notes on a parsed route whether its `filters` were one mapping in `written` (the route as the file has it). */
export function noteFiltersAsWritten(
  route: { readonly filters?: readonly Filter[] | undefined },
  written: unknown,
): void {
  if (route.filters !== undefined && isMapping(written) && isMapping(written.filters))
    Object.defineProperty(route.filters, WRITTEN_AS_ONE, { value: true, enumerable: false });
}

/** The key of the `i`th filter of `filters`, written at `at`: `at[i]`, or `at` itself when written as one mapping. */
export function filterKey(at: string, filters: readonly Filter[], i: number): string {
  return (filters as { [WRITTEN_AS_ONE]?: true })[WRITTEN_AS_ONE] === true ? at : `${at}[${i}]`;
}

/** A schema issue's path as the file writes it: without the `0` after a `filters` written as one mapping. */
export function filterPathAsWritten(path: readonly PropertyKey[], written: unknown): PropertyKey[] {
  const shown: PropertyKey[] = [];
  let at: unknown = written;
  for (const [i, key] of path.entries()) {
    if (key === 0 && path[i - 1] === "filters" && isMapping(at)) continue;
    shown.push(key);
    at =
      (isMapping(at) || Array.isArray(at)) && Object.hasOwn(at, key)
        ? (at as Record<PropertyKey, unknown>)[key]
        : undefined;
  }
  return shown;
}

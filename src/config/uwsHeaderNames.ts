import type { Filter } from "./sections/filters.js";

/** A header name uWS takes: letters, digits and `-` only (it closes a request holding any other, unanswered). */
const UWS_HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** Whether a filter on a field holds for a request without it: only `missing`, `exists: false` and `not_equals` do. */
function holdsWhenAbsent(filter: Filter): boolean {
  if ("missing" in filter) return true;
  if ("exists" in filter) return !filter.exists;
  return "not_equals" in filter;
}

/**
 * `headers.<Name>` filter fields whose name uWS never lets through (`X_Team`, `X.Trace`), each as
 * `filters[...].field: ...`: with `http_server: uws` a request carrying that header is closed with no answer,
 * so no request reaching the route has it, and the filter gives the same answer for every one: never matches
 * (`equals`, `exists: true`, ...) or always holds (`missing: true`, `not_equals`, ...; the other way round
 * under an odd number of `not`).
 */
export function uwsHeaderNameWarnings(filters: readonly Filter[] | undefined): string[] {
  const found: string[] = [];
  const walk = (filter: Filter, at: string, negated: boolean): void => {
    if ("all" in filter)
      for (const [i, inner] of filter.all.entries()) walk(inner, `${at}.all[${i}]`, negated);
    else if ("any" in filter)
      for (const [i, inner] of filter.any.entries()) walk(inner, `${at}.any[${i}]`, negated);
    else if ("not" in filter) walk(filter.not, `${at}.not`, !negated);
    else if (filter.field.startsWith("headers.")) {
      const name = filter.field.slice("headers.".length);
      if (UWS_HEADER_NAME.test(name)) return;
      const verdict = holdsWhenAbsent(filter) !== negated ? "always holds" : "never matches";
      found.push(
        `${at}.field: ${JSON.stringify(filter.field)} ${verdict} on the default HTTP server: uWS closes a request holding a header whose name has a character other than a letter, a digit or - with no answer, so no request that reaches the route has it — have the sender name it ${JSON.stringify(name.replace(/[^A-Za-z0-9-]/g, "-"))}, or set platforms.webhook.http_server: node`,
      );
    }
  };
  for (const [i, filter] of (filters ?? []).entries()) walk(filter, `filters[${i}]`, false);
  return found;
}

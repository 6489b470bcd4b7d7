import type { Filter } from "./sections/filters.js";

/** A header name uWS takes: letters, digits and `-` only (it closes a request holding any other, unanswered). */
const UWS_HEADER_NAME = /^[A-Za-z0-9-]+$/;

/**
 * `headers.<Name>` filter fields whose name uWS never lets through (`X_Team`, `X.Trace`), each as
 * `filters[...].field: ...`: with `http_server: uws` a request carrying that header is closed with no answer,
 * and one without it never matches, so the filter drops or ignores every event.
 */
export function uwsHeaderNameWarnings(filters: readonly Filter[] | undefined): string[] {
  const found: string[] = [];
  const walk = (filter: Filter, at: string): void => {
    if ("all" in filter) for (const [i, inner] of filter.all.entries()) walk(inner, `${at}.all[${i}]`);
    else if ("any" in filter) for (const [i, inner] of filter.any.entries()) walk(inner, `${at}.any[${i}]`);
    else if ("not" in filter) walk(filter.not, `${at}.not`);
    else if (filter.field.startsWith("headers.")) {
      const name = filter.field.slice("headers.".length);
      if (!UWS_HEADER_NAME.test(name))
        found.push(
          `${at}.field: ${JSON.stringify(filter.field)} never matches on the default HTTP server: uWS closes a request holding a header whose name has a character other than a letter, a digit or - with no answer, and a request without it has no such header — have the sender name it ${JSON.stringify(name.replace(/[^A-Za-z0-9-]/g, "-"))}, or set platforms.webhook.http_server: node`,
        );
    }
  };
  for (const [i, filter] of (filters ?? []).entries()) walk(filter, `filters[${i}]`);
  return found;
}

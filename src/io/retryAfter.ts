/** A wait written as a number of seconds (or ms): digits, perhaps with a fraction; never signed, hex or empty. */
export const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;

/** ANSI C's asctime() format, the third HTTP date format (`Sun Nov  6 08:49:37 1994`): GMT, though it says no zone. */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`), read as
 * robustly as RFC 9110 asks (an Internet Message Format date: no weekday, a one-digit day, a numeric zone):
 * a day, a month name, a year, a time of day and a zone (without one `Date.parse` reads local time). Anything less is no date, though `Date.parse` reads
 * `retry 10` as 1 October 2001 (an immediate retry) and `x 2030` as 1 January 2030 (a wait of years).
 */
const IMF_DATE =
  /^(?:[A-Za-z]{3,9},?\s+)?\d{1,2}[\s-][A-Za-z]{3}[\s-]\d{2}(?:\d{2})?\s+\d{1,2}:\d{2}(?::\d{2})?\s+(?:[A-Za-z]{1,5}|[+-]\d{4})$/;

/**
 * Retry-After as seconds: delta-seconds or an HTTP date (which names its day and month; every format is in
 * GMT, also asctime's, which `Date.parse` would read as local time). Anything else is
 * no wait (undefined: the usual backoff), not an immediate retry: `Number` reads "0x10" as 16 and
 * `Date.parse` reads "-1" as the year -1, "5, 5" (a header sent twice, joined by fetch) as 2001 and
 * "retry 10" as 1 October 2001.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  const text = value?.trim() ?? "";
  if (DELAY_SECONDS.test(text)) return Number(text);
  if (!ASCTIME.test(text) && !IMF_DATE.test(text)) return undefined;
  const date = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

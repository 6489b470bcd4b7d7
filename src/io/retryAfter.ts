/** A wait written as a number of seconds (or ms): digits, perhaps with a fraction; never signed, hex or empty. */
export const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;

/** ANSI C's asctime() format, the third HTTP date format (`Sun Nov  6 08:49:37 1994`): GMT, though it says no zone. */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * Retry-After as seconds: delta-seconds or an HTTP date (which names its day and month; every format is in
 * GMT, also asctime's, which `Date.parse` would read as local time). Anything else is
 * no wait (undefined: the usual backoff), not an immediate retry: `Number` reads "0x10" as 16 and
 * `Date.parse` reads "-1" as the year -1 and "5, 5" (a header sent twice, joined by fetch) as 2001.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  const text = value?.trim() ?? "";
  if (DELAY_SECONDS.test(text)) return Number(text);
  if (!/[A-Za-z]/.test(text)) return undefined;
  const date = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

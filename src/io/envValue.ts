import { wholeUtf8Length } from "./utf8Cut.js";

/**
 * The most UTF-8 bytes of payload text an environment value keeps. Linux refuses to start a process
 * with one environment string past 128 KiB (`spawn E2BIG`), so an `event_type` of 200 000 characters
 * in a body would fail every script and command run of that event; event types are short, and the
 * whole payload still reaches the process on stdin.
 */
export const MAX_ENV_VALUE_BYTES = 32 * 1024;

/**
 * Payload text as an environment value: an environment string cannot hold NUL, and Node refuses to
 * start a process whose env has one, so an `event_type` of "a\u0000b" would fail the run. NUL becomes
 * U+FFFD, as in the replacement of any text that cannot be represented. Text past
 * `MAX_ENV_VALUE_BYTES` is cut off (on a whole character).
 */
export function envValue(text: string): string {
  const clean = text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text;
  // A UTF-8 character is at most 3 bytes per UTF-16 unit: shorter text cannot be too long.
  if (clean.length * 3 <= MAX_ENV_VALUE_BYTES) return clean;
  const bytes = Buffer.from(clean, "utf8");
  if (bytes.length <= MAX_ENV_VALUE_BYTES) return clean;
  const head = bytes.subarray(0, MAX_ENV_VALUE_BYTES);
  return head.subarray(0, wholeUtf8Length(head)).toString("utf8");
}

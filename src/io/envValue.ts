/**
 * Payload text as an environment value: an environment string cannot hold NUL, and Node refuses to
 * start a process whose env has one, so an `event_type` of "a\u0000b" would fail the run. NUL becomes
 * U+FFFD, as in the replacement of any text that cannot be represented.
 */
export function envValue(text: string): string {
  return text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text;
}

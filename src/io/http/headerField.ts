/** A header name: an RFC 9110 token. */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09;

/**
 * A header line `name: value` as `[name, value]`, the spaces and tabs around the value left out, or
 * undefined for a line that is no header (a folded or colon-less line, a line break in it). Read in one
 * pass: the pattern it replaces backtracked over a run of spaces inside a value, quadratically (60 000
 * spaces took ~10 s), and its input is a head that anyone who can connect sends.
 */
export function headerField(line: string): readonly [string, string] | undefined {
  const colon = line.indexOf(":");
  if (colon <= 0) return undefined;
  const name = line.slice(0, colon);
  if (!FIELD_NAME.test(name)) return undefined;
  let start = colon + 1;
  let end = line.length;
  while (start < end && isBlank(line.charCodeAt(start))) start++;
  while (end > start && isBlank(line.charCodeAt(end - 1))) end--;
  const value = line.slice(start, end);
  return value.includes("\n") || value.includes("\r") ? undefined : [name, value];
}

/**
 * Bytes uWS drops at either end of a header value: its parser trims every byte below 33 compared as a
 * signed char, which takes 0x80-0xFF along with the whitespace. uWS exposes no raw header bytes, so
 * the node server drops the same bytes: `X-Gitlab-Token: <secret>é` or a delivery ID `\xffid` must read
 * the same on both servers (node reads header bytes as Latin-1: one character per byte here).
 */
function isUwsEdgeByte(code: number): boolean {
  return code <= 0x20 || (code >= 0x80 && code <= 0xff);
}

/**
 * `value` without those bytes at either end. A scan from each end, not a regex: `[...]+$` is tried at
 * every position of a run of such bytes that does not reach the end, so a 128 KiB header of them with one
 * letter after held the gateway's thread for half a minute (quadratic backtracking, before any route).
 */
export function withoutUwsEdgeBytes(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isUwsEdgeByte(value.charCodeAt(start))) start++;
  while (end > start && isUwsEdgeByte(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * `text` as a header carrying it reads on either server (its UTF-8 bytes without those at its ends), or
 * undefined when it reads as written.
 */
export function headerReading(text: string): string | undefined {
  const bytes = Buffer.from(text, "utf8").toString("latin1");
  const kept = withoutUwsEdgeBytes(bytes);
  return kept === bytes ? undefined : Buffer.from(kept, "latin1").toString("utf8");
}

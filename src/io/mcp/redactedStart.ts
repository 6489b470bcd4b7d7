import { cutText } from "../cutText.js";

/**
 * How far before the end of a text cut short (characters) a credential the end cut through may start: none
 * svc holds is longer in any form its redaction recognizes (a JWT of a few KiB, as base64 a third longer,
 * with JSON escapes).
 */
export const CREDENTIAL_REACH = 16 * 1024;

/**
 * At most the first `max` characters of `text`, redacted, where `text` itself is cut short at its end (the
 * rest of its line not read yet, or dropped): `redact` does not recognize a credential that end cuts
 * through, so a redaction of `text` alone would keep its start. What is shown comes from before the last
 * `CREDENTIAL_REACH` characters, as far as the redaction of that part agrees with the redaction of all of
 * `text`: a credential across the part's own end lies whole in `text`, which reads [redacted] where the part
 * still has its start. A text no longer than `CREDENTIAL_REACH` shows nothing.
 */
export function redactedStart(text: string, max: number, redact: (text: string) => string): string {
  const whole = redact(text);
  const part = redact(text.slice(0, Math.max(0, text.length - CREDENTIAL_REACH)));
  const end = Math.min(max, whole.length, part.length);
  let same = 0;
  while (same < end && whole.charCodeAt(same) === part.charCodeAt(same)) same++;
  return cutText(whole, same);
}

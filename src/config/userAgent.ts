import { HEADER_CONTROL, HEADER_NOT_LATIN1 } from "./headerValue.js";

/**
 * `oauth.user_agent` rules: it is sent as the User-Agent header of every token request, and fetch refuses
 * a header value holding a control character or a character outside Latin-1 ("Cannot convert argument to
 * a ByteString because the character at index 8 has a value of 10003"), which would fail each login only
 * after its browser step, naming neither the key nor the fix. Checked when `config.yaml` is loaded and
 * again when a login or refresh renders a `${VAR}` in it. Pure.
 */
export function userAgentProblem(value: string): string | undefined {
  const bad = HEADER_CONTROL.exec(value)?.[0] ?? HEADER_NOT_LATIN1.exec(value)?.[0];
  if (bad === undefined) return undefined;
  const code = `U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
  const what =
    (bad.codePointAt(0) ?? 0) < 0x100
      ? `a control character (${code})`
      : `${JSON.stringify(bad)} (${code}), a character outside Latin-1`;
  return `contains ${what}, which an HTTP header cannot carry, so every token request would fail — write it in ASCII`;
}

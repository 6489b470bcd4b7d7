import { cutText } from "../cutText.js";

/** Keys whose values never appear in an error excerpt. */
const SECRET_KEYS = [
  "access_token",
  "refresh_token",
  "id_token",
  "code",
  "code_verifier",
  "client_secret",
  "client_assertion",
  "secret",
  "api_key",
  "apikey",
  "private_key",
  "device_code",
  "assertion",
  "password",
  "token",
];
const KEY_ALT = SECRET_KEYS.join("|");
const JSON_PAIR = new RegExp(`("(?:${KEY_ALT})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, "gi");
const FORM_PAIR = new RegExp(`(\\b(?:${KEY_ALT})=)[^&\\s"]+`, "gi");
/** JWTs and long opaque strings that look like credentials. */
const TOKENISH = /\b(?:eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|[A-Za-z0-9_~+/-]{32,}={0,2})/g;
/**
 * A JSON string's escape of a token68 character: `\/` (PHP's json_encode escapes every `/`, which base64
 * holds), or `\u00XX` of a letter, a digit, `-`, `.`, `_`, `~`, `+`, `/` or `=` (Gson writes `=` as `\u003d`).
 */
const ESCAPED_TOKEN_CHAR = String.raw`\\/|\\u00(?:2[bdef]|3[\dd]|[46][1-9a-f]|[57][\da]|5f|7e)`;
/** One character of a token not in quotes: not what ends it, or one of the token's characters escaped. */
const TOKEN_CHAR = String.raw`(?:[^\s"'\\,}&]|${ESCAPED_TOKEN_CHAR})`;
/** A quote opening a token: `'`, `"`, a JSON string's `\"`, `\u0027` or `\u0022` (Gson's), a form's `%27` or `%22`. */
const QUOTE = String.raw`\\?["']|\\u00(?:22|27)|%2[27]`;
/**
 * A token after `Bearer` (and the space after it, in a form body `+` or `%20`). In quotes (`QUOTE`) with a
 * token's character first, up to the same quote closing them, which stays with the opening one; otherwise up to
 * what ends it in the body quoting it (a JSON string's `"`, another backslash escape than `ESCAPED_TOKEN_CHAR`,
 * the `,` or `}` after it, a form's `&`, a quote). A quote with no token character after it (`"Bearer ",`) opens
 * no token. The rest of the body, the fields after the token, stays.
 */
const BEARER = new RegExp(
  String.raw`(Bearer(?:\s|\+|%20)+)(?:(${QUOTE})(?=${TOKEN_CHAR})(?:(?!\2)\S)+\2|(${QUOTE})?${TOKEN_CHAR}+)`,
  "gi",
);

const bearerHidden = (
  _match: string,
  bearer: string,
  quote: string | undefined,
  opening: string | undefined,
): string =>
  quote === undefined ? `${bearer}${opening ?? ""}[redacted]` : `${bearer}${quote}[redacted]${quote}`;

/** A short, single-line excerpt of an authorization server's error body with credentials removed. */
export function redactedExcerpt(body: string, max = 200): string {
  const cleaned = body
    .replace(JSON_PAIR, '$1"[redacted]"')
    .replace(FORM_PAIR, "$1[redacted]")
    .replace(BEARER, bearerHidden)
    .replace(TOKENISH, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return cleaned.length > max ? `${cutText(cleaned, max)}…` : cleaned;
}

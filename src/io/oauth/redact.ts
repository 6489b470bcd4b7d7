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
 * A token after `Bearer` (and the space after it, in a form body `+` or `%20`). In quotes (`'`, `"`, a JSON
 * string's `\"`, a form's `%27` or `%22`), up to the same quote closing them, which stays with the opening one;
 * otherwise up to what ends it in the body quoting it (a JSON string's `"`, the `,` or `}` after it, a form's
 * `&`, a `'`). The rest of the body, the fields after the token, stays.
 */
const BEARER = /(Bearer(?:\s|\+|%20)+)(?:(\\?["']|%2[27])(?:(?!\2)\S)*\2|(\\?["']|%2[27])?[^\s"'\\,}&]+)/gi;

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

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
 * A token after `Bearer`, up to what ends it in the body quoting it (a JSON string's `"`, the `,` or `}` after
 * it, a form's `&`, a `'`): the rest of the body, the fields after the token, stays.
 */
const BEARER = /(Bearer\s+)[^\s"',}&]+/gi;

/** A short, single-line excerpt of an authorization server's error body with credentials removed. */
export function redactedExcerpt(body: string, max = 200): string {
  const cleaned = body
    .replace(JSON_PAIR, '$1"[redacted]"')
    .replace(FORM_PAIR, "$1[redacted]")
    .replace(BEARER, "$1[redacted]")
    .replace(TOKENISH, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return cleaned.length > max ? `${cutText(cleaned, max)}…` : cleaned;
}

/** `Bearer <token>` / `Basic <credentials>` as an Authorization header value reads (RFC 9110 token68). */
const CREDENTIAL = /\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/-]+=*)/g;

/** A credential has a digit or a symbol, or is long; an auth-param (`realm=`, `error="..."`) is none. */
function isCredential(value: string): boolean {
  if (/^[A-Za-z_-]+=$/.test(value)) return false;
  return /[0-9._~+/=-]/.test(value) || value.length >= 20;
}

/**
 * Authorization credentials quoted in a text replaced by `[redacted]`: a server answering a refused
 * request with "invalid token Bearer <token>" puts the token into error messages we log. Words after
 * the scheme (`Basic authentication required`, `Bearer realm="mcp"`) are kept.
 */
export function redactCredentials(text: string): string {
  if (!text.includes("Bearer") && !text.includes("Basic")) return text;
  return text.replace(CREDENTIAL, (whole, scheme: string, space: string, value: string) =>
    isCredential(value) ? `${scheme}${space}[redacted]` : whole,
  );
}

/** `\u00XX` for a character JSON encoders may escape beyond JSON.stringify (Go: `<>&`; Python: non-ASCII). */
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A secret as it may be echoed back: verbatim, percent-encoded (paths, query strings), form-encoded, and
 * as a string inside a JSON answer (an error body quoting the request's headers or fields): escaped as
 * JSON.stringify escapes it (`"` and `\`), and with `<`, `>`, `&` and non-ASCII as `\u` escapes too, as
 * Go's encoding/json and Python's json.dumps write them.
 */
function secretForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    json,
    json.replace(/[<>&\u0080-\uffff]/g, unicodeEscape),
  ]);
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Whether an API key is a placeholder a keyless local server is given (`EMPTY` for vLLM, `ollama`,
 * `lm-studio`, `sk-no-key-required`, `none`): words of letters joined by hyphens, under 24 characters.
 * Such a value hides nothing, and replacing it in a model's reply would turn "the queue is EMPTY" into
 * "the queue is [redacted]"; a key a provider issues is longer and has digits in it.
 */
export function isPlaceholderKey(key: string): boolean {
  return key.length < 24 && /^[A-Za-z]+(?:-[A-Za-z]+)*$/.test(key);
}

/** Replaces every secret in `text` (in any of its encoded forms) with `[redacted]`. */
export function scrub(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 4) continue;
    for (const form of secretForms(secret)) out = out.split(form).join("[redacted]");
  }
  return out;
}

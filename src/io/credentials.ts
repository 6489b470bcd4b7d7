import { base64Forms } from "./base64Forms.js";
import { containsAnyOf } from "./containsAny.js";

/**
 * `Bearer <token>` / `Basic <credentials>` as an Authorization header value reads (RFC 9110 token68), the
 * scheme a word of its own: at the start, after a non-word character, or after an escaped control character
 * (`\n`, `\t`, ... in a JSON dump of a payload, whose letter would otherwise join the scheme into one word).
 * What precedes the scheme is looked behind at once the scheme matched: a lookbehind first, tried at every
 * position, made redacting a log line about ten times slower.
 */
const CREDENTIAL = /(Bearer|Basic)(?<=(?:^|\W|\\[bfnrt])\1)(\s+)([A-Za-z0-9._~+/-]+=*)/g;

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

/** `<auth-scheme> <credentials>`, as an Authorization header's value reads (RFC 9110, section 11.4). */
const AUTHORIZATION_VALUE = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s+(\S(?:.*\S)?)\s*$/s;

/**
 * The secrets an `Authorization` header's value carries: the credentials after its scheme, whatever the
 * scheme (`Bearer`, `Token`, `Key` as fal.ai takes it, `Api-Key`, `SSWS`, ...), since a server refusing
 * them may quote them alone (`invalid api key '<key>'`), and for `Basic` also the password inside them
 * (and its form-decoded text, as `client_secret_basic` encodes it). None for a value without a scheme.
 */
export function authorizationSecrets(value: string): string[] {
  const parsed = AUTHORIZATION_VALUE.exec(value);
  if (parsed === null) return [];
  const [, scheme, credentials] = parsed as unknown as [string, string, string];
  const secrets = [credentials];
  if (scheme.toLowerCase() !== "basic") return secrets;
  const decoded = Buffer.from(credentials, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return secrets;
  const password = decoded.slice(colon + 1);
  secrets.push(password);
  try {
    const formDecoded = decodeURIComponent(password.replace(/\+/g, " "));
    if (formDecoded !== password) secrets.push(formDecoded);
  } catch {
    // not form-encoded: the raw form is scrubbed already
  }
  return secrets;
}

/** `\u00XX` for a character JSON encoders may escape beyond JSON.stringify (Go: `<>&`; Python: non-ASCII). */
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A secret as text may carry it: verbatim, percent-encoded (paths, query strings), form-encoded, and as a
 * string inside JSON (an error body quoting the request's headers or fields, a payload's `"secret"` field):
 * escaped as JSON.stringify escapes it (`"` and `\`), and besides with `\u` escapes as JSON encoders write
 * them by default: `<`, `>` and `&` (Go's encoding/json), non-ASCII (Python's json.dumps), non-ASCII and `/`
 * as `\/` (PHP's json_encode), and all of those. A secret without such characters has its one JSON form.
 */
export function secretTextForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      json,
      json.replace(/[<>&\u0080-\uffff]/g, unicodeEscape),
      json.replace(/[<>&]/g, unicodeEscape),
      json.replace(/[\u0080-\uffff]/g, unicodeEscape),
      json.replace(/[\u0080-\uffff]/g, unicodeEscape).replaceAll("/", "\\/"),
    ]),
  ].sort((a, b) => b.length - a.length);
}

/**
 * A secret as it may be echoed back: its `secretTextForms`, and in base64 or base64url, alone or inside a
 * longer run (`base64Forms`), as a process may print it encoded.
 */
export function secretForms(secret: string): string[] {
  const forms = new Set([...secretTextForms(secret), ...base64Forms(secret)]);
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

/**
 * One UTF-16 unit of a secret as a JSON string may hold it: itself (`"` and `\` escaped, as JSON must), as a
 * `\u` escape with its hex digits in either case, and `/` as `\/` too. Each escape may be escaped again (a
 * proxy that quotes the upstream's JSON answer inside its own JSON string: `\\/`, `\\u0061`).
 */
function jsonUnitPattern(unit: string): string {
  const itself =
    unit === '"' ? '\\\\+"' : unit === "\\" ? "(?:\\\\\\\\)+" : unit.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const hex = unit
    .charCodeAt(0)
    .toString(16)
    .padStart(4, "0")
    .replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`);
  return `(?:${itself}|\\\\+u${hex}${unit === "/" ? "|\\\\+/" : ""})`;
}

/**
 * The secret inside a JSON string with any of its units `\u`-escaped: which ones is each encoder's choice
 * (.NET's escapes `+`, others each letter), past the forms `secretForms` lists.
 */
function escapedEcho(secret: string): string {
  let source = "";
  for (let i = 0; i < secret.length; i++) source += jsonUnitPattern(secret[i] as string);
  return source;
}

/** Shorter secrets are not looked for: they would match the text's own words. */
const MIN_SCRUBBED = 4;
const REDACTED = "[redacted]";
const longestFirst = (a: string, b: string) => b.length - a.length;

/** A text with secrets replaced by `[redacted]`. */
export type Scrubber = (text: string) => string;

const unchanged: Scrubber = (text) => text;

/**
 * Whether a text that holds none of the secrets' forms may yet hold an escaped echo of one: a `\u` escape, a
 * `\/` for a secret with `/`, or any backslash for a secret with `"` or `\` (escaped again, as a proxy quotes
 * them). Without one, a match of the escaped echoes would be a secret written as it is, which the forms have.
 */
function escapeCheck(secrets: readonly string[]): (text: string) => boolean {
  if (secrets.some((secret) => secret.includes('"') || secret.includes("\\")))
    return (text) => text.includes("\\");
  const slash = secrets.some((secret) => secret.includes("/"));
  return (text) => text.includes("\\u") || (slash && text.includes("\\/"));
}

/**
 * `scrub` for one list of secrets, their forms worked out once and looked for longest first (a token whose
 * part is a secret too is hidden whole); a text with a backslash, which may hold JSON `\u` escapes, is matched
 * against them too. A text is first checked for any form in one pass (`containsAnyOf`): most hold none, and a
 * search for each of a secret's forms (six for a 40-hex token, with its base64) took longer than the search
 * of its one form did. Not one regular expression of all forms: it was no faster than those searches, and a
 * list given once (a request's own tokens) would pay its compiling each time. No secret to look for: the text
 * as it is.
 */
export function secretScrubber(secrets: readonly (string | undefined)[]): Scrubber {
  const kept = [
    ...new Set(secrets.filter((s): s is string => s !== undefined && s.length >= MIN_SCRUBBED)),
  ].sort(longestFirst);
  if (kept.length === 0) return unchanged;
  const forms = [...new Set(kept.flatMap(secretForms))].sort(longestFirst);
  const holdsAnyForm = containsAnyOf(forms);
  const mayHoldEscapes = escapeCheck(kept);
  let anyEscaped: RegExp | undefined;
  return (text) => {
    let out = text;
    if (holdsAnyForm(text))
      for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    if (!out.includes("\\") || (out === text && !mayHoldEscapes(text))) return out;
    anyEscaped ??= new RegExp(kept.map(escapedEcho).join("|"), "g");
    return out.replace(anyEscaped, REDACTED);
  };
}

/** The scrubbers of the lists `scrub` was given lately (most callers give the same few again and again). */
const scrubbers = new Map<string, Scrubber>();
const MAX_SCRUBBERS = 64;
/** The scrubbers of frozen lists, by the list itself: one cannot change, so it needs no key made of it. */
const frozenScrubbers = new WeakMap<readonly (string | undefined)[], Scrubber>();
/** How many times a list was read whole (joined into its key) to find its scrubber. */
let listsRead = 0;

/**
 * The scrubber `scrub` uses for `secrets`: made once for the same secrets, found by a key joined of them all.
 * A frozen list (`combinedSecrets`) is found by itself from its second use on: a line a server writes, with
 * thousands of subscription secrets hidden, costs no join of them.
 */
export function scrubberFor(secrets: readonly (string | undefined)[]): Scrubber {
  const frozen = Object.isFrozen(secrets);
  if (frozen) {
    const known = frozenScrubbers.get(secrets);
    if (known !== undefined) return known;
  }
  listsRead++;
  const key = secrets.join("\u0000");
  let scrubber = scrubbers.get(key);
  if (scrubber === undefined) {
    if (scrubbers.size >= MAX_SCRUBBERS) scrubbers.clear();
    scrubber = secretScrubber(secrets);
    scrubbers.set(key, scrubber);
  }
  if (frozen) frozenScrubbers.set(secrets, scrubber);
  return scrubber;
}

/** How many times `scrubberFor` read a list whole to find its scrubber (tests count them). */
export function secretListsRead(): number {
  return listsRead;
}

/** Replaces every secret in `text` (in any of its encoded forms) with `[redacted]`. */
export function scrub(text: string, secrets: readonly (string | undefined)[] = []): string {
  if (secrets.length === 0) return text;
  return scrubberFor(secrets)(text);
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * A few secrets (`few`: a connection's credentials, which a login adds its tokens to in place; the config's
 * own) with many (`many`: the secrets of every stored subscription, thousands with as many subscriptions),
 * both read at each use, as one frozen list that stays the same array while neither changed, so `scrub`
 * finds its scrubber by the list itself: a line a server writes costs no copy of them all, nor a key joined
 * of them. `many` counts as changed when it gives another array (its source makes a new one only when one
 * of them changed); `few` is compared item by item.
 */
export function combinedSecrets(
  few: () => readonly string[],
  many?: () => readonly string[],
): () => readonly string[] {
  let fewSeen: readonly string[] = NONE;
  let manySeen: readonly string[] | undefined;
  let list: readonly string[] = NONE;
  return () => {
    const some = few();
    const more = many?.() ?? NONE;
    if (more === manySeen && sameItems(some, fewSeen)) return list;
    fewSeen = [...some];
    manySeen = more;
    list = Object.freeze([...some, ...more]);
    return list;
  };
}

function sameItems(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

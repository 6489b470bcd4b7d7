import { base64Forms } from "./base64Forms.js";
import { containsAnyOf, type Occurring, occurringOf } from "./containsAny.js";
import {
  collect,
  composed,
  cutsEscape,
  type DecodedView,
  entitySearch,
  htmlView,
  insideEscape,
  jsonLayers,
  percentSearch,
  percentView,
  type Spans,
  spansReplaced,
  stringAround,
} from "./decodedView.js";

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
 * as `\/` (PHP's json_encode), `/` as `\/` with non-ASCII as it is (PHP's with `JSON_UNESCAPED_UNICODE`), and all
 * of those. A secret without such characters has its one JSON form.
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
      json.replaceAll("/", "\\/"),
    ]),
  ].sort((a, b) => b.length - a.length);
}

/**
 * A secret as it may be echoed back: its `secretTextForms`, and in base64 or base64url, alone or inside a longer
 * run (`base64Forms`), as a process may print it encoded. Written with HTML entities, or percent-encoded otherwise
 * than `encodeURIComponent` writes it (lowercase hex, some characters as they are), it is found by reading the
 * text's entities (`entitySpans`) or its `%XX` escapes (`percentSpans`), not by a form of its own.
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

/** The control characters JSON writes with a short escape (`\n`), by the letter of that escape. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const SHORT_ESCAPE_OF: Readonly<Record<string, string>> = {
  "\b": "b",
  "\f": "f",
  "\n": "n",
  "\r": "r",
  "\t": "t",
};

/**
 * One UTF-16 unit of a secret as a JSON string may hold it: itself (`"` and `\` escaped, as JSON must), as a
 * `\u` escape with its hex digits in either case, `/` as `\/` too, and a line break, tab, backspace or form feed
 * as its short escape (`\n`, `\t`, ...), as JSON.stringify and most encoders write them. Each escape may be
 * escaped again (a proxy that quotes the upstream's JSON answer inside its own JSON string: `\\/`, `\\u0061`,
 * `\\n`).
 *
 * A `\` written as backslashes takes a text's run of them in at most three ways, so that a run matched against
 * it costs a pass or two, not one for each way of sharing it out (`(?:\\\\)+` tried every even count, and a
 * secret `\\ab` on 50,000 backslashes did not finish in minutes): the run's pairs up to its end or its last `\`
 * (which begins the next unit's escape, `\\\u0061`), or one pair with more backslashes after it for the units
 * after it (another `\`, or an escape written with more backslashes: `\\\\\\u0061`, a `\` and an `a` escaped
 * twice). Where an echo may end, these are the ends every even count reached. `leading`: the secret's first unit,
 * whose forms beginning with a `\` are not tried inside a run of backslashes, only from its start (an echo found
 * from inside it reads an escape's `\` as its own, and each place in a run tried cost a pass over the rest of it).
 */
function jsonUnitPattern(unit: string, leading: boolean): string {
  // The first `\` of an escape, not one right after another where `leading`.
  const opener = leading ? String.raw`(?<!\\)\\` : String.raw`\\`;
  const itself =
    unit === '"'
      ? String.raw`${opener}\\*"`
      : unit === "\\"
        ? String.raw`${opener}\\(?:(?:\\\\)*(?!\\\\)|(?=\\))`
        : unit.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const hex = unit
    .charCodeAt(0)
    .toString(16)
    .padStart(4, "0")
    .replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`);
  const short = SHORT_ESCAPE_OF[unit];
  const uEscape = String.raw`${opener}\\*u${hex}`;
  // A `\`'s `\u005c` first: written `\\u005c` (escaped again), its `\\` would otherwise end an echo of a secret
  // ending in `\` and leave the escape's `u005c` behind. No other unit's forms begin alike.
  const either = unit === "\\" ? `${uEscape}|${itself}` : `${itself}|${uEscape}`;
  const slash = unit === "/" ? String.raw`|${opener}\\*/` : "";
  return `(?:${either}${slash}${short === undefined ? "" : String.raw`|${opener}\\*${short}`})`;
}

/**
 * The secret inside a JSON string with any of its units `\u`-escaped: which ones is each encoder's choice
 * (.NET's escapes `+`, others each letter), past the forms `secretForms` lists. `leading` (the default): the
 * secret's first unit is the expression's first (not a piece after another, `piecewiseEchoes`).
 */
function escapedEcho(secret: string, leading = true): string {
  let source = "";
  for (let i = 0; i < secret.length; i++) source += jsonUnitPattern(secret[i] as string, leading && i === 0);
  return source;
}

/** The length of the source of one expression of all `secrets`' escaped echoes (`echoesOf`). */
function echoesSourceLength(secrets: readonly string[]): number {
  let length = secrets.length - 1;
  for (const secret of secrets) {
    // Past the bound, no need to spell the rest out: each unit's pattern is at least 14 characters.
    if (length > OPTIMIZED_ECHOES_SOURCE || secret.length * 14 > OPTIMIZED_ECHOES_SOURCE)
      return Number.POSITIVE_INFINITY;
    length += escapedEcho(secret).length;
  }
  return length;
}

/** Shorter secrets are not looked for: they would match the text's own words. */
export const MIN_SCRUBBED = 4;
const REDACTED = "[redacted]";
/** What `scrub` gives for a text it could not redact: never the text itself. */
export const WITHHELD = "[withheld: redaction failed]";
const longestFirst = (a: string, b: string) => b.length - a.length;

/** A text with secrets replaced by `[redacted]`. */
export type Scrubber = (text: string) => string;

const unchanged: Scrubber = (text) => text;
const withheld: Scrubber = () => WITHHELD;

/**
 * Whether a text that holds none of the secrets' forms may yet hold an escaped echo of one: a `\u` escape, a
 * `\/` for a secret with `/`, or any backslash for a secret with `"`, `\` or a control character JSON writes
 * with a short escape (escaped again, as a proxy quotes them, or beside other escapes: `\n` and `\u002B`).
 * Without one, a match of the escaped echoes would be a secret written as it is, which the forms have.
 */
function escapeCheck(secrets: readonly string[]): (text: string) => boolean {
  if (secrets.some((secret) => /["\\\b\f\n\r\t]/.test(secret))) return (text) => text.includes("\\");
  const slash = secrets.some((secret) => secret.includes("/"));
  return (text) => text.includes("\\u") || (slash && text.includes("\\/"));
}

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * A text as the units of its JSON strings, to find which secrets it may echo escaped: each `\u` escape read as
 * its unit and each short escape (`\n`, `\t`, `\r`, `\b`, `\f`) as the control character it stands for (however
 * many backslashes precede them), every other backslash, and an escaped one, left out. The units of an echo are
 * in it in their order, a secret's `\` left out as well (`bareUnits`), with two exceptions that a secret's
 * `bareUnits` allow for: an echo may start inside an escape, reading its `u` and hex digits (or the letter of a
 * short escape) as the secret's first units, and a secret with `\u` (or `\n`, ...) in it may be read as its own
 * `\\u` (`\\n`).
 */
function textUnits(text: string): string {
  // The text between backslash runs is copied in slices: a replace calling back at each run cost several
  // times the one expression of a few secrets' escaped echoes on a text of many escapes.
  let at = text.indexOf("\\");
  if (at < 0) return text;
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at);
    let end = at + 1;
    while (text.charCodeAt(end) === BACKSLASH) end++;
    if (text.charCodeAt(end) === LETTER_U && HEX4.test(text.slice(end + 1, end + 5))) {
      const unit = String.fromCharCode(Number.parseInt(text.slice(end + 1, end + 5), 16));
      if (unit !== "\\") out += unit;
      end += 5;
    } else {
      const short = SHORT_ESCAPES[text[end] as string];
      if (short !== undefined) {
        out += short;
        end++;
      }
    }
    from = end;
    at = text.indexOf("\\", end);
  }
  return out + text.slice(from);
}

/**
 * The first units of a secret an echo may read inside an escape of the text: a `u` and up to four hex digits, or
 * the letter of a short escape (`n` of `\n`).
 */
const READ_INSIDE_AN_ESCAPE = /^u?[0-9a-fA-F]{0,4}/;
const READ_INSIDE_A_SHORT_ESCAPE = /^[bfnrt]/;

/**
 * What `textUnits` of a text holding an escaped echo of `secret` holds: the secret past the units an echo may
 * read inside an escape, its `\` left out; undefined for a secret with `\u` or a `\` before the letter of a short
 * escape (`\n`) in it, looked for in every text with an escape.
 */
function bareUnits(secret: string): string | undefined {
  if (/\\[ubfnrt]/.test(secret)) return undefined;
  const inside = Math.max(
    READ_INSIDE_AN_ESCAPE.exec(secret)?.[0].length ?? 0,
    READ_INSIDE_A_SHORT_ESCAPE.test(secret) ? 1 : 0,
  );
  return secret.slice(inside).replaceAll("\\", "");
}

/** The most secrets one regular expression of escaped echoes is made of; more are matched by several in turn. */
const ECHOES_AT_ONCE = 16;
/**
 * The most units (characters) of secrets one regular expression of escaped echoes spells out: each costs about
 * 15 characters of its source, and V8 could not compile one of some 6,400 units (one 8,000-character key).
 * A longer secret is matched piece by piece (`piecewiseEchoes`).
 */
const ECHO_UNITS_AT_ONCE = 1024;
/**
 * The most units of all a scrubber's secrets for which a text is matched against one expression of all their
 * escaped echoes: past it, reading the text's units first and matching only the secrets found costs about as
 * much or less on a 6 KB text of many `\u` escapes (16 40-hex secrets: 34 against 34 µs; 8 64-hex ones: 14
 * against 30), and one of thousands of units cost more than a millisecond a text (bench/secretForms.ts).
 */
const ALL_ECHOES_UNITS = 512;
/**
 * The most secrets for which one expression of all escaped echoes is used, past `ALL_ECHOES_UNITS`, while its
 * source is at most `OPTIMIZED_ECHOES_SOURCE` characters: a single OAuth access token or JWT is often 600 to
 * 1,500 characters, and for one of 600 to 1,200 on a 6 KB text of many `\u` escapes, reading the text's units
 * first cost about 50 µs where one expression costs 2 to 3 (bench/secretForms.ts).
 */
const FEW_ECHOES = 4;
/**
 * The longest source of that one expression: V8 leaves a regular expression of a longer source (20 KB) without
 * the analysis that lets a match skip ahead. On that text one token of some 1,420 units (a source of 21,410) cost
 * 42 µs, four of 400 (25,230) 148, where one of 1,330 (20,160) or four of 340 (20,190) cost 2 to 3.
 */
const OPTIMIZED_ECHOES_SOURCE = 20_480;
/** A secret longer than this is not matched piece by piece: a text found to hold its units is withheld. */
const MAX_PIECEWISE_UNITS = 16_384;
/** The most regular expressions a scrubber keeps (one for each set of secrets its texts were found to echo). */
const MAX_ECHO_PATTERNS = 64;

/** Where a text writes the escaped echoes of some secrets, added to `spans` (those it holds already, and more). */
type Echoes = (text: string, spans: Spans) => void;

/**
 * The escaped echoes of `secrets` as one regular expression. Its source spells each secret out unit by unit, so
 * a failure to compile it (one too large) is not passed on: its message quotes the source. The error thrown
 * instead names how many secrets it was made of, nothing of them. V8 compiles an expression at its first match,
 * so that is tried here, on a text of one-byte and one of two-byte characters.
 */
function echoesOf(secrets: readonly string[]): Echoes {
  try {
    const pattern = new RegExp(secrets.map((secret) => escapedEcho(secret)).join("|"), "g");
    "".replace(pattern, REDACTED);
    "\u20ac".replace(pattern, REDACTED);
    return (text, spans) => {
      // From the place after each match's start, not its end: an echo may begin inside another (`wxyzab\u002Bc`
      // and `ab\u002Bcdef1` in `wxyzab\u002Bcdef1`), which a search past the end would leave shown.
      pattern.lastIndex = 0;
      for (let found = pattern.exec(text); found !== null; found = pattern.exec(text)) {
        spans.push([found.index, found.index + found[0].length]);
        pattern.lastIndex = found.index + 1;
      }
    };
  } catch {
    throw new Error(`the escaped echoes of ${secrets.length} secrets could not be compiled`);
  }
}

/**
 * The escaped echoes of one secret longer than `ECHO_UNITS_AT_ONCE`, matched as a run of pieces: the first piece
 * found anywhere, each next one right where the one before ended (a sticky expression). A piece ends between two
 * units neither of which is `\`, so no run of backslashes is shared by two pieces. What this could miss is
 * caught after (`withoutUnitsOf`): a text still holding the secret's units is not given.
 */
function piecewiseEchoes(secret: string): Echoes {
  const pieces: string[] = [];
  for (let at = 0; at < secret.length; ) {
    let end = Math.min(at + ECHO_UNITS_AT_ONCE, secret.length);
    while (end < secret.length && end > at + 1 && (secret[end - 1] === "\\" || secret[end] === "\\")) end--;
    pieces.push(secret.slice(at, end));
    at = end;
  }
  const [first, ...rest] = pieces.map(
    (piece, i) => new RegExp(escapedEcho(piece, i === 0), i === 0 ? "g" : "y"),
  );
  return (text, spans) => {
    const start = first as RegExp;
    start.lastIndex = 0;
    for (let found = start.exec(text); found !== null; found = start.exec(text)) {
      let end = found.index + found[0].length;
      for (const piece of rest) {
        piece.lastIndex = end;
        end = piece.test(text) ? piece.lastIndex : -1;
        if (end < 0) break;
      }
      if (end < 0) {
        start.lastIndex = found.index + 1;
        continue;
      }
      spans.push([found.index, end]);
      start.lastIndex = found.index + 1;
    }
  };
}

/** How many texts were read as their units to find the secrets they may echo escaped (`foundEchoes`). */
let textsReadAsUnits = 0;

/** How many texts a scrubber read as their units to find which secrets they may echo (tests count them). */
export function secretTextsReadAsUnits(): number {
  return textsReadAsUnits;
}

/**
 * The escaped echoes of the secrets found in a text, matched as `foundEchoes` makes them: of those with `\u` in
 * them always, of the others those whose units (`bareUnits`) the text's units hold.
 */
function foundEchoes(kept: readonly string[]): Echoes {
  const always: string[] = [];
  const byUnits = new Map<string, string[]>();
  for (const secret of kept) {
    const units = bareUnits(secret);
    if (units === undefined) always.push(secret);
    else byUnits.set(units, [...(byUnits.get(units) ?? []), secret]);
  }
  const occurring = occurringOf([...byUnits.keys()]);
  const patterns = new Map<string, Echoes>();
  const echoes = (some: readonly string[]): Echoes => {
    const key = some.join("\u0000");
    let pattern = patterns.get(key);
    if (pattern === undefined) {
      if (patterns.size >= MAX_ECHO_PATTERNS) patterns.clear();
      const [one] = some;
      pattern =
        some.length === 1 && (one as string).length > ECHO_UNITS_AT_ONCE
          ? withoutUnitsOf(one as string, piecewiseEchoes(one as string))
          : echoesOf(some);
      patterns.set(key, pattern);
    }
    return pattern;
  };
  return (text, spans) => {
    textsReadAsUnits++;
    const found = new Set(always);
    for (const units of occurring(textUnits(text)))
      for (const secret of byUnits.get(units) ?? []) found.add(secret);
    if (found.size === 0) return;
    // Longest first, as one expression of them all would match them: at most ECHOES_AT_ONCE secrets and
    // ECHO_UNITS_AT_ONCE units an expression, a longer secret alone.
    let some: string[] = [];
    let units = 0;
    for (const secret of kept) {
      if (!found.has(secret)) continue;
      if (some.length > 0 && (some.length >= ECHOES_AT_ONCE || units + secret.length > ECHO_UNITS_AT_ONCE)) {
        echoes(some)(text, spans);
        some = [];
        units = 0;
      }
      some.push(secret);
      units += secret.length;
    }
    echoes(some)(text, spans);
  };
}

/**
 * `echoes` of a secret matched piece by piece, checked: a text whose units still hold the secret's once the echoes
 * found so far are hidden is not given (it throws, so the text is withheld). A secret past `MAX_PIECEWISE_UNITS`
 * is not matched at all.
 */
function withoutUnitsOf(secret: string, echoes: Echoes): Echoes {
  const units = bareUnits(secret);
  if (secret.length > MAX_PIECEWISE_UNITS)
    throw new Error(`an escaped echo of ${secret.length} characters is not looked for`);
  return (text, spans) => {
    echoes(text, spans);
    if (units !== undefined && textUnits(spansReplaced(text, spans, REDACTED)).includes(units))
      throw new Error("a text still holds the units of a secret");
  };
}

/**
 * A form of a secret that ends in `\`, with the `u005c` of the `\u005c` a JSON encoder may write for that `\`
 * (also escaped again, `\\u005c`, where the form's JSON `\\` matches), so that the tail of its escape is not
 * left behind (`[redacted]u005c`). Nothing else after it is taken: the backslashes that follow may begin the
 * escape of the next unit (`\\`, `\"`, `\n`), which stays as written.
 */
function endingInEscape(form: string): RegExp {
  return new RegExp(`${form.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?:u005[cC])?`, "g");
}

/** How many texts, and JSON strings of texts, were read with their entities decoded (`entitySpans`). */
let entityReadings = 0;

/** How many texts and JSON strings a scrubber read with their entities decoded (tests count them). */
export function secretEntityReadings(): number {
  return entityReadings;
}

/** Whether a code point is one of those `strings` hold. */
function heldIn(strings: readonly string[]): (codePoint: number) => boolean {
  const held = new Set<number>();
  for (const string of strings) for (const c of string) held.add(c.codePointAt(0) as number);
  return (codePoint) => held.has(codePoint);
}

/**
 * The spans of a text that write secrets with HTML entities, whichever characters the page escaped and however
 * (`&#43;`, `&#x2B;`, `&#X2F;`, `&#x002f;`, `&plus;`, `&sol;`, `&equals;`, `&apos;`, `&quot;`, `&amp;`…): the
 * text is read with its entities decoded (`htmlView`) and that reading searched for every form of every secret in
 * one pass (`occurringOf`), each one found hidden where the text writes it, its entities whole. Only a text with
 * an entity read as a character some form holds is read so (`entitySearch`: a page of `&amp;` and `&lt;` where no
 * secret has `&` or `<` costs one search). A JSON string holding such an entity (as Go's encoding/json writes it,
 * `\u0026#x2f;`, or written as it is beside an escape: PHP's `\/`) is also read as its units, its backslashes in
 * pairs as JSON.parse reads them, and again for each layer of JSON quoting it (`jsonLayers`), each reading as HTML,
 * for the secrets themselves: only those strings, not the whole text. `forms` are the scrubber's, `kept` its
 * secrets.
 */
function entitySpans(
  forms: readonly string[],
  kept: readonly string[],
): (text: string, spans: Spans) => void {
  const inForms = entitySearch(heldIn(forms), false);
  const inSecrets = entitySearch(heldIn(kept), false);
  const inSecretsQuoted = entitySearch(heldIn(kept), true);
  let formsIn: Occurring | undefined;
  let secretsIn: Occurring | undefined;
  /** Each JSON string holding an entity of a secret's character and an escape, read as JSON and then as HTML. */
  const quotedSpans = (text: string, spans: Spans, written: boolean) => {
    let from = 0;
    // A secret's characters are its forms': without an entity of those, none of its own.
    let plain = written ? inSecrets(text, 0) : -1;
    let quoted = inSecretsQuoted(text, 0);
    for (;;) {
      if (plain >= 0 && plain < from) plain = inSecrets(text, from);
      if (quoted >= 0 && quoted < from) quoted = inSecretsQuoted(text, from);
      if (plain < 0 && quoted < 0) return;
      const at = plain < 0 ? quoted : quoted < 0 ? plain : Math.min(plain, quoted);
      const [start, end] = stringAround(text, at);
      from = Math.max(end, at + 1);
      const string = text.slice(start, end);
      if (!string.includes("\\")) continue;
      entityReadings++;
      secretsIn ??= occurringOf(kept);
      for (const units of jsonLayers(string)) {
        const html = htmlView(units.text);
        collect(composed(units, html), secretsIn(html.text), start, spans);
      }
    }
  };
  return (text, spans) => {
    const written = inForms(text, 0) >= 0;
    if (written) {
      formsIn ??= occurringOf(forms);
      entityReadings++;
      const html = htmlView(text);
      collect(html, formsIn(html.text), 0, spans);
    }
    if (text.includes("\\")) quotedSpans(text, spans, written);
  };
}

/** How many texts were read with their `%XX` escapes decoded (`percentSpans`). */
let percentReadings = 0;

/** How many texts a scrubber read with their `%XX` escapes decoded (tests count them). */
export function secretPercentReadings(): number {
  return percentReadings;
}

/**
 * `to` past the rest of the JSON escape a find ending at `to` in a literal `\` begins (its last `\` the first of a
 * pair in its run of backslashes): the `\` of `\\`, the `uXXXX` of `\uXXXX`, the letter of `\"`, `\n`…, so that
 * no half of it is left behind (`[redacted]\"` for `ab%2Fcd\\"`, which the JSON holding it no longer reads). `to`
 * itself for a find ending in no `\`, or in the second of a pair.
 */
function pastEscapeBegun(text: string, from: number, to: number): number {
  if (to <= from || text.charCodeAt(to - 1) !== BACKSLASH) return to;
  let run = to - 1;
  while (run > 0 && text.charCodeAt(run - 1) === BACKSLASH) run--;
  if ((to - run) % 2 === 0) return to;
  if (/^u[0-9a-fA-F]{4}/.test(text.slice(to, to + 5))) return to + 5;
  return /^[\\"/bfnrt]/.test(text.slice(to, to + 1)) ? to + 1 : to;
}

/**
 * `from` before the `\` that begins a JSON escape a find starting at `from` cuts (the last of an odd run of
 * backslashes right before it): `\/ab%2Bcd1` for `/ab+cd1`, `\"+Za` for `" Za`, hidden whole, not `\[redacted]`,
 * which the JSON holding it no longer reads. `from` itself after no `\`, or after an escaped one (`\\`).
 */
function beforeEscapeBegun(text: string, from: number): number {
  let run = from;
  while (run > 0 && text.charCodeAt(run - 1) === BACKSLASH) run--;
  return (from - run) % 2 === 1 ? from - 1 : from;
}

/**
 * The spans of a text that write secrets percent-encoded however the encoder chose: its hex in lowercase (.NET's
 * `HttpUtility.UrlEncode`: `%2f`), only some characters encoded (Python's `quote` keeps `/`), or both, which no form
 * of `secretTextForms` holds. The text is read with its `%XX` decoded (`percentView`), and that reading with its
 * JSON escapes (`jsonLayers`: a form's `payload=` of percent-encoded JSON, `abcd%2Fef12%5C%5C` for `abcd/ef12\`),
 * each searched for every secret in one pass, each one found hidden where the text writes it, its escapes whole; a
 * find ending in a literal `\` with the rest of the JSON escape it begins (`pastEscapeBegun`), one starting right
 * after the `\` of an escape with that `\` (`beforeEscapeBegun`). Only a text with an
 * escape read as a character some secret holds, or as `\`, is read so (`percentSearch`: a URL's `%20` where no
 * secret has a space costs one search; a text without `%`, one search for `%`). A secret holding a space is also
 * looked for in a form's reading, each `+` a space (`pass+word~12` as Python's `urlencode` writes `pass word~12`,
 * `correct+horse%2bbattery` as .NET's `UrlEncode`), read only for a text with a `+`, when some secret has a space.
 * Each find is added to `spans` with the escapes it cuts, and to `found` as found (what the escaped echoes are
 * looked for beside).
 */
function percentSpans(kept: readonly string[]): (text: string, spans: Spans, found: Spans) => void {
  const heldInSecrets = heldIn(kept);
  const held = (codePoint: number) => codePoint === BACKSLASH || heldInSecrets(codePoint);
  const mayHold = percentSearch(
    held,
    kept.some((secret) => /[\u0080-\uffff]/.test(secret)),
  );
  const spaced = kept.filter((secret) => secret.includes(" "));
  let secretsIn: Occurring | undefined;
  let spacedIn: Occurring | undefined;
  /**
   * Each secret `occurring` in `view`, a find ending in a literal `\` with the rest of the escape it begins
   * (`pastEscapeBegun`), one starting after the `\` of an escape with that `\` (`beforeEscapeBegun`), and in its
   * JSON layers where the text writes no `\` as it is (`%5C%5C`, `%5C%22`: one written with `\` is an escaped echo,
   * which the echoes' match hides whole), as spans of `text` (in `found` as found). With `form`,
   * a find holding a space or a `\` before its end as written is none: a form encoder writes neither as it is (a
   * `+ ` before a JSON-escaped echo of a secret, whose escape the find would cut, leaving the echo half shown).
   */
  const search = (
    text: string,
    view: DecodedView,
    occurring: Occurring,
    form: boolean,
    spans: Spans,
    found: Spans,
  ) => {
    const read: Spans = [];
    collect(view, occurring(view.text), 0, read);
    for (const [from, to] of read)
      if (!form || !/ |\\(?!$)/.test(text.slice(from, to))) {
        spans.push([beforeEscapeBegun(text, from), pastEscapeBegun(text, from, to)]);
        found.push([from, to]);
      }
    if (!view.text.includes("\\")) return;
    const layered: Spans = [];
    for (const units of jsonLayers(view.text)) {
      const layer = composed(view, units);
      collect(layer, occurring(layer.text), 0, layered);
    }
    for (const [from, to] of layered) {
      const written = text.slice(from, to);
      if (!written.includes("\\") && !(form && written.includes(" "))) {
        spans.push([beforeEscapeBegun(text, from), to]);
        found.push([from, to]);
      }
    }
  };
  return (text, spans, found) => {
    if (mayHold(text)) {
      percentReadings++;
      secretsIn ??= occurringOf(kept);
      search(text, percentView(text, held), secretsIn, false, spans, found);
    }
    if (spaced.length > 0 && text.includes("+")) {
      percentReadings++;
      spacedIn ??= occurringOf(spaced);
      search(text, percentView(text, held, true), spacedIn, true, spans, found);
    }
  };
}

/**
 * `text` with `spans` replaced by `[redacted]` as `spansReplaced` replaces them, and where each place in it stands
 * in `text` (`place`): a place inside a `[redacted]` at the start of the span it hides, or at its end for the `end`
 * of a span (`true`), so that a span of the text given back covers what it covers in `text`.
 */
function placesReplaced(
  text: string,
  spans: Spans,
): { text: string; place: (at: number, end: boolean) => number } {
  if (spans.length === 0) return { text, place: (at) => at };
  // Each `[redacted]`: where it starts in the text given back, and the span of `text` it hides.
  const hidden: [number, number, number][] = [];
  let out = "";
  let from = 0;
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0] || b[1] - a[1])) {
    if (end <= from) continue;
    const last = hidden[hidden.length - 1];
    if (start < from && last !== undefined) last[2] = end;
    else {
      out += text.slice(from, start);
      hidden.push([out.length, start, end]);
      out += REDACTED;
    }
    from = end;
  }
  out += text.slice(from);
  // How much longer the text given back is than `text` up to each `[redacted]`'s start: a place is looked up in
  // the `[redacted]`s by halving, so that many echoes in a text of many finds cost no pass over them each.
  const shifts: number[] = [];
  let shift = 0;
  for (const [, start, stop] of hidden) {
    shifts.push(shift);
    shift += REDACTED.length - (stop - start);
  }
  const place = (at: number, end: boolean) => {
    // The last `[redacted]` starting before `at`.
    let low = 0;
    let high = hidden.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((hidden[middle] as [number, number, number])[0] < at) low = middle + 1;
      else high = middle;
    }
    if (low === 0) return at;
    const [outAt, start, stop] = hidden[low - 1] as [number, number, number];
    if (at < outAt + REDACTED.length) return end ? stop : start;
    return at - (shifts[low - 1] as number) - (REDACTED.length - (stop - start));
  };
  return { text: out, place };
}

/**
 * `scrub` for one list of secrets, their forms worked out once and looked for longest first (a token whose
 * part is a secret too is hidden whole). A text is first checked for any form in one pass (`containsAnyOf`):
 * most hold none, and a search for each of a secret's forms (six for a 40-hex token, with its base64) took
 * longer than the search of its one form did. Not one regular expression of all forms: it was no faster than
 * those searches, and a list given once (a request's own tokens) would pay its compiling each time.
 *
 * A text with an escape that may hide a secret (`escapeCheck`) is matched against the escaped echoes
 * (`escapedEcho`) of every secret, longest first, in one regular expression compiled once, when the secrets
 * are few and short (at most `ECHOES_AT_ONCE` of them, `ALL_ECHOES_UNITS` units in all), or fewer and longer
 * (at most `FEW_ECHOES`, an expression of at most `OPTIMIZED_ECHOES_SOURCE` characters). Otherwise, or once
 * that expression failed, it is read as the units its JSON strings hold (`textUnits`), and that is searched in
 * the same one pass for every secret (`occurringOf` of their `bareUnits`): only the secrets found there are
 * matched as escaped echoes (`foundEchoes`), by a regular expression of those few, longest first, as one of
 * them all would match them, a long one piece by piece. One of them all cost seconds to compile and
 * milliseconds a text with a thousand stored subscriptions' secrets, and could not be compiled with two
 * thousand, nor with one secret of 8,000 characters; with a few short ones, it costs less a text than reading
 * the text's units first.
 *
 * No secret to look for: the text as it is. The scrubber never throws: a text it failed to redact is given
 * as `WITHHELD`.
 */
export function secretScrubber(secrets: readonly (string | undefined)[]): Scrubber {
  try {
    return scrubberOf(secrets);
  } catch {
    return withheld;
  }
}

function scrubberOf(secrets: readonly (string | undefined)[]): Scrubber {
  const kept = [
    ...new Set(secrets.filter((s): s is string => s !== undefined && s.length >= MIN_SCRUBBED)),
  ].sort(longestFirst);
  if (kept.length === 0) return unchanged;
  const forms = [...new Set(kept.flatMap(secretForms))].sort(longestFirst);
  const holdsAnyForm = containsAnyOf(forms);
  const endingInEscapes = new Map(
    forms.filter((form) => form.endsWith("\\")).map((f) => [f, endingInEscape(f)]),
  );
  /**
   * The percent-encoded forms: one found starting or ending inside a `%XX` of the text (`Fdead%26beef1` in
   * `%2Fdead%26beef1`) is not there, read as the URL it is written for, and the text is left whole.
   */
  const percentForms = new Set(forms.filter((form) => !kept.includes(form) && /%[0-9A-Fa-f]{2}/.test(form)));
  /**
   * The JSON-escaped forms (`\/abcd` for `/abcd`, `there\/k3y` for `there/k3y`), not the secret as it is: one
   * found starting inside an escape of the text, after an odd run of backslashes, is not there (`insideEscape`):
   * at the second `\` of an escaped pair (`C:\\/abcd`), where the shorter form after that `\` (`/abcd`) is hidden
   * alone, the pair whole, or at the letter of a short escape (`tab\there\/k3y`, its `t` a tab's).
   */
  const escapedForms = new Set(forms.filter((form) => form.includes("\\") && !kept.includes(form)));
  /**
   * Where the text writes each form as it is (one ending in `\` with the rest of its `\u005c`), a percent-encoded
   * one only where it cuts no `%XX` (`percentForms`), a JSON-escaped one only where it starts inside no escape
   * (`escapedForms`).
   */
  const formSpans = (text: string, spans: Spans) => {
    if (!holdsAnyForm(text)) return;
    for (const form of forms) {
      if (!text.includes(form)) continue;
      const inEscape = endingInEscapes.get(form);
      const percentEncoded = percentForms.has(form);
      const escaped = escapedForms.has(form);
      if (inEscape === undefined)
        for (let at = text.indexOf(form); at >= 0; ) {
          if (
            (percentEncoded && cutsEscape(text, at, at + form.length)) ||
            (escaped && insideEscape(text, at))
          ) {
            at = text.indexOf(form, at + 1);
            continue;
          }
          spans.push([at, at + form.length]);
          at = text.indexOf(form, at + form.length);
        }
      else
        for (const found of text.matchAll(inEscape))
          if (!escaped || !insideEscape(text, found.index))
            spans.push([found.index, found.index + found[0].length]);
    }
  };
  const hideEntities = entitySpans(forms, kept);
  const hidePercentEncoded = percentSpans(kept);
  /**
   * The forms and the secrets written with entities or percent-encoded, all found in the text as given: `spans`,
   * the percent readings' with the escapes they cut, and `found`, theirs as found.
   */
  const formsAndEntities = (text: string): { spans: Spans; found: Spans } => {
    const spans: Spans = [];
    formSpans(text, spans);
    hideEntities(text, spans);
    const found = [...spans];
    hidePercentEncoded(text, spans, found);
    return { spans, found };
  };
  const mayHoldEscapes = escapeCheck(kept);
  let foundIn: Echoes | undefined;
  const echoesFound: Echoes = (text, spans) => {
    foundIn ??= foundEchoes(kept);
    foundIn(text, spans);
  };
  /**
   * The text with its forms, entities, percent-encodings and escaped echoes hidden at once (a span in another
   * merged into it: a secret inside a longer one written with an entity is hidden with it). The escaped echoes
   * are looked for in the text left once the finds are hidden as found, when it holds a `\`, and hidden in the
   * text as given: one beside a percent reading's find that cuts an escape (`ab+cd\\u005cs3cr3t` for `ab cd\` and
   * `\s3cr3t`, the find's `\` the first of `\\u005c`) is found whole and hidden with the find and that escape as
   * one, where looked for in the text left with the escape hidden it had lost its first `\` and was shown. A
   * text with a find is also looked through as given, for an escaped echo of a longer secret that holds a find
   * (`b0B/até\/` for `b0B/até/` holds `até\/`, a form of `até/`): hidden whole, where in the text left it was cut
   * by that find and the rest of the longer secret shown (`b0B/[redacted]`). Not one that adds only backslashes to
   * the find (`\\/cafépw1` for the find `/cafépw1`, read as `/` escaped twice): the `\\` before it is kept.
   */
  const redacted = (text: string, echoes: Echoes): string => {
    const { spans, found } = formsAndEntities(text);
    if (!text.includes("\\")) return spansReplaced(text, spans, REDACTED);
    const left = placesReplaced(text, found);
    if (left.text !== text) echoesAcrossFinds(text, echoesIn(text, echoes), found, spans);
    if (!left.text.includes("\\") || (left.text === text && !mayHoldEscapes(text)))
      return spansReplaced(text, spans, REDACTED);
    for (const [from, to] of echoesIn(left.text, echoes))
      spans.push([left.place(from, false), left.place(to, true)]);
    return spansReplaced(text, spans, REDACTED);
  };
  let units = 0;
  for (const secret of kept) units += secret.length;
  if (
    (kept.length <= ECHOES_AT_ONCE && units <= ALL_ECHOES_UNITS) ||
    (kept.length <= FEW_ECHOES && echoesSourceLength(kept) <= OPTIMIZED_ECHOES_SOURCE)
  ) {
    // A few short secrets, or fewer longer ones: one expression of all their escaped echoes, compiled at the first text that may
    // hold one; if it cannot be, the secrets found in each text are matched, as with more.
    let allEchoes: Echoes | undefined;
    let failed = false;
    const echoes: Echoes = (text, spans) => {
      if (!failed)
        try {
          allEchoes ??= echoesOf(kept);
        } catch {
          failed = true;
        }
      (allEchoes ?? echoesFound)(text, spans);
    };
    return scrubbing((text) => redacted(text, echoes));
  }
  return scrubbing((text) => redacted(text, echoesFound));
}

/**
 * The escaped echoes `echoes` finds in `text`, but for one starting at the letter of an escape (after an odd run
 * of backslashes: `there\/k3y` in `tab\there\/k3y`, its `t` a tab's): there the text holds no such echo, and
 * hiding it would leave the escape's `\` alone (`tab\[redacted]`), which the JSON holding it no longer reads.
 */
function echoesIn(text: string, echoes: Echoes): Spans {
  const all: Spans = [];
  echoes(text, all);
  return all.filter(([from]) => !insideEscape(text, from));
}

/**
 * The escaped echoes (`given`, found in `text` as given) that overlap a find (`found`) and hold more than finds
 * and backslashes, added to `spans`, to be hidden with the finds they overlap as one: a longer secret's echo
 * holding a shorter one's form (`b0B/até\/` for `b0B/até/`, holding `até\/`) or overlapping it (`ab\u002Bcdef1`
 * for `ab+cdef1` beside `def1wxyz`), which in the text left once the finds are hidden was cut by them and shown in
 * part. Not one that adds only backslashes to a find (`\\/cafépw1` for the find `/cafépw1`, read as `/` escaped
 * twice): the `\\` before it is kept. An echo without a `\` is a secret as it is, a find already. The echoes are
 * walked in order of their start, and the finds, merged, with a moving place, so that a text of many finds and
 * as many echoes of them (a line of a secret repeated 100,000 times) costs a pass, not one for each pair.
 */
function echoesAcrossFinds(text: string, given: Spans, found: Spans, spans: Spans): void {
  if (given.length === 0 || found.length === 0) return;
  // The finds in order of their start, in groups of overlapping ones, each group with where it ends.
  const groups: { end: number; finds: [number, number][] }[] = [];
  for (const [start, end] of [...found].sort((a, b) => a[0] - b[0])) {
    const last = groups[groups.length - 1];
    if (last !== undefined && start < last.end) {
      last.finds.push([start, end]);
      last.end = Math.max(last.end, end);
    } else groups.push({ end, finds: [[start, end]] });
  }
  let backslash = -1;
  let first = 0;
  for (const [from, to] of [...given].sort((a, b) => a[0] - b[0])) {
    if (backslash < from) {
      backslash = text.indexOf("\\", from);
      if (backslash < 0) return;
    }
    if (backslash >= to) continue;
    while (first < groups.length && (groups[first] as { end: number }).end <= from) first++;
    let hidden = false;
    for (let g = first; !hidden && g < groups.length; g++) {
      const group = groups[g] as { end: number; finds: [number, number][] };
      if ((group.finds[0] as [number, number])[0] >= to) break;
      for (const [start, end] of group.finds) {
        if (start >= to) break;
        if (end <= from) continue;
        // More than this find and backslashes.
        if (!onlyBackslashes(text, from, start) || !onlyBackslashes(text, end, to)) {
          hidden = true;
          break;
        }
      }
    }
    if (hidden) spans.push([from, to]);
  }
}

/** Whether `text` from `from` to `to` holds nothing but backslashes (or nothing). */
function onlyBackslashes(text: string, from: number, to: number): boolean {
  for (let at = from; at < to; at++) if (text.charCodeAt(at) !== BACKSLASH) return false;
  return true;
}

/** `scrubbed` as a scrubber, which never throws: a text it failed to redact is given as `WITHHELD`. */
function scrubbing(scrubbed: Scrubber): Scrubber {
  return (text) => {
    try {
      return scrubbed(text);
    } catch {
      return WITHHELD;
    }
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

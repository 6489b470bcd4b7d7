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
 * The hex of a token68 character's code (a letter, a digit, `-`, `.`, `_`, `~`, `+`, `/` or `=`), as a JSON
 * `\u00XX` escape, a form's `%XX` or an HTML `&#xXX;` writes it (Gson writes `=` as `\u003d`), and its decimal,
 * as an HTML `&#NN;` writes it (Go's html/template writes `+` as `&#43;`).
 */
const HEX68 = String.raw`2[bdef]|3[\dd]|[46][1-9a-f]|[57][\da]|5f|7e`;
const DEC68 = String.raw`4[35-9]|5[0-7]|61|6[5-9]|[78]\d|9[057-9]|1[01]\d|12[0-26]`;
/** `Bearer` and the space after it (in a form body `+` or `%20`). */
const BEARER = /Bearer(?:\s|\+|%20)+/gi;
/**
 * A quote as a body may write it (sticky): after a run of backslashes (JSON's `\"`, `\\\"`, `\u0027`), a `"`,
 * `'`, `u0022` or `u0027` (`QUOTE_CHAR`); else a `"` or `'`, a form's `%22` or `%27`, HTML's `&quot;`, `&apos;`,
 * `&#34;`, `&#39;`, `&#x22;` or `&#x27;`, leading zeros too (PHP's `&#039;`) (`QUOTE_CODED`).
 */
const QUOTE_CHAR = /["']|u00(?:22|27)/iy;
const QUOTE_CODED = /["']|%2[27]|&(?:quot|apos|#0*3[49]|#x0*2[27]);/iy;
/** The same quotes ending a text (the one before `Bearer`), without the backslashes before them. */
const QUOTE_ENDING = /(?:["']|u00(?:22|27)|%2[27]|&(?:quot|apos|#0{0,8}3[49]|#x0{0,8}2[27]);)$/i;
/** What may follow a run of backslashes and end a token: a quote, or a line break, tab or space escaped. */
const ESCAPE_ENDING = /["'nrt]|u00(?:2[027]|0[9ad])/iy;
/**
 * A form's or HTML's quote, HTML's `<` or `>` (`&lt;`, `&#60;`, `&#x3e;`, leading zeros too), or a form's space,
 * tab or line break: each ends a token.
 */
const CODED_ENDING = /%(?:2[027]|0[9ad])|&(?:quot|apos|lt|gt|#0*(?:3[49]|6[02])|#x0*(?:2[27]|3[ce]));/iy;
/** A form's space, tab or line break. */
const CODED_SPACE = /%(?:20|0[9ad])/iy;
/** What ends a token past whitespace and quotes: the closer of what holds it (JSON, a list, markup). */
const CLOSERS = new Set([..."\"',}])<>"].map((c) => c.charCodeAt(0)));
/** A token68 character, or one escaped (JSON's `\/` and `\u00XX`, a form's `%XX`, HTML's entities). */
const TOKEN68_CHAR = new RegExp(
  String.raw`[A-Za-z0-9._~+/-]|\\+(?:/|u00(?:${HEX68}))|%(?:${HEX68})|&(?:#x0*(?:${HEX68})|#0*(?:${DEC68})|sol|plus|equals|period|lowbar);`,
  "iy",
);
/**
 * An inline HTML tag a page may wrap a token in right after `Bearer ` (`<code>`, `<b>`, `<tt>`, `<kbd>`,
 * `<span class="x">`…), written or escaped (`&lt;code&gt;`), its attributes at most 200 characters.
 */
const TAG_NAMES = "code|b|tt|kbd|samp|var|i|em|strong|mark|q|span";
const INLINE_TAG = new RegExp(String.raw`<(?:${TAG_NAMES})(?:\s[^<>]{0,200})?>`, "iy");
const INLINE_TAG_CODED = new RegExp(
  String.raw`(?:&lt;|&#0*60;|&#x0*3c;)(?:${TAG_NAMES})(?:\s[^<>]{0,200}?)?(?:&gt;|&#0*62;|&#x0*3e;)`,
  "iy",
);
/**
 * Any other HTML tag (`<u>`, `<small>`, `<pre>`, `<br>`, `<br/>`, `<a>`, `<h1>`…, attributes too), written or
 * escaped: skipped like an inline one when a token's character (or another tag) follows it, so it is never read as
 * the token. A link with attributes (`<a href="…">`) wraps words, not a token, and is not skipped.
 */
const ANY_TAG = /<(?!a\s)[A-Za-z]{1,10}[1-6]?(?:\s[^<>]{0,200})?\/?>/iy;
const ANY_TAG_CODED =
  /(?:&lt;|&#0*60;|&#x0*3c;)(?!a\s)[A-Za-z]{1,10}[1-6]?(?:\s[^<>]{0,200}?)?\/?(?:&gt;|&#0*62;|&#x0*3e;)/iy;
/**
 * A `-` or `.` and a word of letters (lowercase, capitalized, or a short one in capitals; hyphenated words too, up
 * to three, each of at most 16 letters): prose after a placeholder (`<token>-style authentication`,
 * `<token>-based header`, `<token>.json for JSON`, `<token>.JSON`, `<token>.Check your config`) when the word
 * ends the token (`proseAfter`), not a token, which holds a digit, mixed case or a longer run
 * (`<mytag>-abcd1234secret`, `<mytag>-abcdefghijklmnopqrstuvwxyz`).
 */
const PROSE_WORD = /[-.](?:[a-z]{1,16}-){0,2}(?:[A-Z]?[a-z]{1,16}|[A-Z]{1,8})/y;
/** A sentence's punctuation after a word of prose (`<token>-style, please`, `<token>-style.`). */
const SENTENCE_PUNCTUATION = /[,.;:!?]*/y;
/**
 * What no token holds and prose puts after a placeholder's `.` (`<token>.—see docs`, `<token>.&nbsp;More`): a
 * dash, an ellipsis or a no-break space, written or as HTML's entity.
 */
const PROSE_BREAK = /[\u2013\u2014\u2026\u00a0]|&(?:nbsp|ndash|mdash|hellip|#0*160|#x0*a0);/iy;
/** A letter or a digit: what a token holds (a `.` or `…` alone after `<token>` is the sentence's). */
const ALNUM = /[A-Za-z0-9]/y;
/** HTML's elements a page writes around text: `<pre>` before a line break is one of them, no token in `<…>`. */
const HTML_ELEMENTS = new Set(
  (
    "a abbr b bdi bdo big blockquote br caption center cite code dd del dfn div dl dt em font h1 h2 h3 h4 h5 h6 hr " +
    "i ins kbd label li mark nobr ol p pre q s samp small span strike strong sub sup table tbody td th thead tr tt " +
    "u ul var wbr"
  ).split(" "),
);
/** A `<` written or escaped: before a token, one wrapping it (`Bearer <abcd1234>`). */
const ANGLE_OPEN = /<|&(?:lt|#0*60|#x0*3c);/iy;
/** A `>` written or escaped: after a token, the end of the lone `<…>` wrapping it. */
const ANGLE_CLOSE = />|&(?:gt|#0*62|#x0*3e);/iy;
/** The most inline tags after `Bearer ` skipped (`<b><code>`). */
const MAX_TAGS = 4;
/** A `WWW-Authenticate` challenge's auth-param (`realm="mcp"`, `error=\"invalid_token\"`): no token. */
const AUTH_PARAM = /(?:realm|scope|error|error_description|error_uri|resource_metadata)=/iy;
const BACKSLASH = 0x5c;
const LESS_THAN = 0x3c;
const AMPERSAND = 0x26;
const SLASH = 0x2f;
const REDACTED = "[redacted]";

const isSpace = (text: string, at: number) => /\s/.test(text[at] as string);

function stickyAt(pattern: RegExp, text: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(text)?.[0];
}

/** Past a run of backslashes starting at `at` (`at` itself when none). */
function pastBackslashes(text: string, at: number): number {
  let end = at;
  while (text.charCodeAt(end) === BACKSLASH) end++;
  return end;
}

/** The quote starting at `at`, the backslashes before its `"`, `'`, `u0022` or `u0027` with it. */
function quoteAt(text: string, at: number): string | undefined {
  const end = pastBackslashes(text, at);
  const quote = end > at ? stickyAt(QUOTE_CHAR, text, end) : stickyAt(QUOTE_CODED, text, at);
  return quote === undefined ? undefined : text.slice(at, end + quote.length);
}

/** The quote ending at `at`, the backslashes before its `"`, `'`, `u0022` or `u0027` with it. */
function quoteEndingAt(text: string, at: number): string | undefined {
  const quote = QUOTE_ENDING.exec(text.slice(Math.max(0, at - 16), at))?.[0];
  if (quote === undefined) return undefined;
  let start = at - quote.length;
  if (!/^["'u]/i.test(quote)) return quote;
  while (start > 0 && text.charCodeAt(start - 1) === BACKSLASH) start--;
  return /^u/i.test(quote) && start === at - quote.length ? undefined : text.slice(start, at);
}

/** Where a token not in quotes starting at `at` ends: at whitespace or a closer (a quote in any form, `,`…). */
function unquotedEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      const end = pastBackslashes(text, i);
      if (stickyAt(ESCAPE_ENDING, text, end) !== undefined) return i;
      i = end;
    } else if (
      CLOSERS.has(c) ||
      isSpace(text, i) ||
      ((c === 0x25 || c === 0x26) && stickyAt(CODED_ENDING, text, i) !== undefined)
    )
      return i;
    else i++;
  }
  return i;
}

/** Whether a `<` (or `&lt;`) opening a tag or a lone `<…>` is at `at`: not one closing a tag (`</b>`). */
function opensAt(text: string, at: number): boolean {
  const open = stickyAt(ANGLE_OPEN, text, at);
  return open !== undefined && text.charCodeAt(at + open.length) !== SLASH;
}

/** The tag (inline or another, `ANY_TAG`) starting at `at`, written or escaped; undefined for none. */
function tagAt(text: string, at: number, inline: boolean): string | undefined {
  const written = text.charCodeAt(at) === LESS_THAN;
  if (inline) return stickyAt(written ? INLINE_TAG : INLINE_TAG_CODED, text, at);
  return stickyAt(written ? ANY_TAG : ANY_TAG_CODED, text, at);
}

/** Whether `name` (a tag's, or a lone `<…>`'s content, a `/` closing it left out) is an HTML element's. */
const isElement = (name: string) => HTML_ELEMENTS.has(name.replace(/\/$/, "").toLowerCase());

/**
 * Whether a token goes on at `at`, right after a tag: a letter or a digit is there, or punctuation a token may
 * start with (`-`, `_`, `.`, `~`, `+`, `/`, written or escaped: base64url tokens start with `-` or `_`) with a
 * letter or a digit after it before whitespace or a closer (`unquotedEnd`), any other character stepped over
 * (`<br/>.éabcd123`). Punctuation alone before whitespace, a closer or the end (`<token>.`, `<token>...`, `<br/>.`
 * ending a sentence) is the text's. After a lone placeholder (`placeholder`), so is punctuation before a dash,
 * an ellipsis or a no-break space (`PROSE_BREAK`: `<token>.—see docs`, `<token>.&nbsp;More`).
 */
function tokenGoesOn(text: string, at: number, placeholder: boolean): boolean {
  if (stickyAt(ALNUM, text, at) !== undefined) return true;
  if (stickyAt(TOKEN68_CHAR, text, at) === undefined) return false;
  const end = unquotedEnd(text, at);
  for (let i = at; i < end; ) {
    if (stickyAt(ALNUM, text, i) !== undefined) return true;
    if (placeholder && stickyAt(PROSE_BREAK, text, i) !== undefined) return false;
    i += stickyAt(TOKEN68_CHAR, text, i)?.length ?? 1;
  }
  return false;
}

/**
 * Whether a word of prose starts at `at` (`PROSE_WORD`), the token ending right after it and any sentence
 * punctuation (`-style`, `-style,`, `-style.`, `.json` at the end, `-style"` and `-style\n` in JSON): where a
 * token would end there, at whitespace, a closer, an escaped line break or the end (`unquotedEnd`).
 */
function proseAfter(text: string, at: number): boolean {
  const word = stickyAt(PROSE_WORD, text, at);
  if (word === undefined) return false;
  const after = at + word.length;
  const end = after + (stickyAt(SENTENCE_PUNCTUATION, text, after)?.length ?? 0);
  return unquotedEnd(text, end) === end;
}

/** Whether the other tag `tag` (`ANY_TAG`) is a lone `<…>` of no HTML element's name, no attributes (`<token>`). */
function isPlaceholder(tag: string): boolean {
  const name = /^(?:<|&(?:lt|#0*60|#x0*3c);)([A-Za-z]{1,10}[1-6]?)(?:>|&(?:gt|#0*62|#x0*3e);)$/i.exec(
    tag,
  )?.[1];
  return name !== undefined && !isElement(name);
}

/**
 * Whether the other tag `tag` (`ANY_TAG`) ending at `after` is skipped: another `<` follows it, or a token goes
 * on after it (`tokenGoesOn`: `<mytag>-abcd1234`, `<br/>abcd1234`, `<br>-abcdefgh`), so it is never read as the
 * token. Else a lone placeholder (`<token>`, no HTML element's name, no attributes) may itself be a lone `<…>`
 * wrapping a token (`Bearer <token>.`: the `.` after it is the sentence's), and an element's tag before a
 * sentence's `.` wraps no token. A word of prose after a placeholder (`proseAfter`: `<token>-style
 * authentication`, `<token>.json for JSON`) is no token either; after an element's tag (`<br>-style`,
 * `<u>.abc-def`) it is read as one: a credential shown is worse than prose hidden.
 */
function tagSkipped(text: string, tag: string, after: number): boolean {
  if (opensAt(text, after)) return true;
  const placeholder = isPlaceholder(tag);
  return tokenGoesOn(text, after, placeholder) && !(placeholder && proseAfter(text, after));
}

/**
 * Where the token after `Bearer ` starting at `at` begins past the markup wrapping it: past inline tags
 * (`INLINE_TAG`, escaped too) and any other tag a token's character or another `<` follows (`ANY_TAG`: `<u>`,
 * `<small>`, `<br>`, `<br/>`; not before punctuation alone, a sentence's `.`: `tagSkipped`), then
 * past a lone `<` (or `&lt;`) wrapping the token: a token's character after it (not the `/` of a closing tag), the
 * token ending exactly at a `>` (or `&gt;`), whatever follows it (`<abc>`, `<abc>.`, `<b><abc></b>`; not
 * `<a href=…>`, nor an HTML element's name, `<pre>` before a line break); `at` itself when none.
 */
function pastMarkup(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c !== LESS_THAN && c !== AMPERSAND) return at;
  let start = at;
  for (let tags = 0; tags < MAX_TAGS; tags++) {
    let tag = tagAt(text, start, true);
    if (tag === undefined) {
      tag = tagAt(text, start, false);
      if (tag === undefined || !tagSkipped(text, tag, start + tag.length)) break;
    }
    start += tag.length;
  }
  const open = opensAt(text, start) ? stickyAt(ANGLE_OPEN, text, start) : undefined;
  if (open === undefined || stickyAt(TOKEN68_CHAR, text, start + open.length) === undefined) return start;
  const end = unquotedEnd(text, start + open.length);
  if (stickyAt(ANGLE_CLOSE, text, end) === undefined || isElement(text.slice(start + open.length, end)))
    return start;
  return start + open.length;
}

/**
 * Where a token in quotes starting at `at` ends: at the same `quote` closing it (`closed`), else at whitespace
 * or the end. Another quote (`\"` in a token between `"`) is the token's.
 */
function quotedEnd(text: string, at: number, quote: string): { end: number; closed: boolean } {
  const first = quote.charCodeAt(0);
  const closing = quote.toLowerCase();
  let i = at;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      const end = pastBackslashes(text, i);
      const after = stickyAt(ESCAPE_ENDING, text, end);
      if (after === undefined) {
        i = end;
        continue;
      }
      if (!/^["']|^u00(?:22|27)$/i.test(after)) return { end: i, closed: false };
      if (text.slice(i, end + after.length).toLowerCase() === closing) return { end: i, closed: true };
      i = end + after.length;
    } else if (isSpace(text, i) || (c === 0x25 && stickyAt(CODED_SPACE, text, i) !== undefined))
      return { end: i, closed: false };
    else if (c === first && text.slice(i, i + quote.length).toLowerCase() === closing)
      return { end: i, closed: true };
    else i++;
  }
  return { end: i, closed: false };
}

/**
 * Each token after `Bearer` hidden, past the inline tags or the lone `<` wrapping it (`pastMarkup`). Not in
 * quotes, it ends only at whitespace (also escaped: `\n`, `%20`) or at a closer: a quote in any form `quoteAt`
 * reads, `,`, `}`, `]`, `)`, `<` or `>` (also as HTML's entities, `&lt;`, `&#62;`); every other character is
 * the token's (`&` and `;` of an HTML entity, `%` of a form's escape, `\` of a JSON one). A quote with a
 * token68 character (`TOKEN68_CHAR`) right after it opens a token that the same quote closes (or whitespace,
 * or the end), the quotes kept. A quote after `Bearer` the same as the one before it (`'Bearer '`,
 * `\"Bearer \"`) closes that phrase and opens nothing, and so does any quote before no token character; an
 * auth-param (`Bearer realm="mcp"`) is no token. Read left to right once, each part of the text looked at a
 * bounded number of times: no input makes it slow.
 */
function bearerTokensHidden(text: string): string {
  let out = "";
  let from = 0;
  BEARER.lastIndex = 0;
  for (let found = BEARER.exec(text); found !== null; found = BEARER.exec(text)) {
    const at = pastMarkup(text, found.index + found[0].length);
    const quote = quoteAt(text, at);
    let start = at;
    let end = at;
    let resume = at;
    if (quote !== undefined) {
      const opened = at + quote.length;
      resume = opened;
      const before = quoteEndingAt(text, found.index);
      if (
        before?.toLowerCase() !== quote.toLowerCase() &&
        stickyAt(TOKEN68_CHAR, text, opened) !== undefined
      ) {
        const quoted = quotedEnd(text, opened, quote);
        start = opened;
        end = quoted.end;
        resume = quoted.closed ? end + quote.length : end;
      }
    } else {
      const param = stickyAt(AUTH_PARAM, text, at);
      if (param === undefined || quoteAt(text, at + param.length) === undefined) {
        end = unquotedEnd(text, at);
        resume = end;
      }
    }
    if (end > start) {
      out += `${text.slice(from, start)}${REDACTED}`;
      from = end;
    }
    BEARER.lastIndex = Math.max(resume, BEARER.lastIndex);
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A short, single-line excerpt of an authorization server's error body with credentials removed. */
export function redactedExcerpt(body: string, max = 200): string {
  const cleaned = bearerTokensHidden(
    body.replace(JSON_PAIR, '$1"[redacted]"').replace(FORM_PAIR, "$1[redacted]"),
  )
    .replace(TOKENISH, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return cleaned.length > max ? `${cutText(cleaned, max)}…` : cleaned;
}

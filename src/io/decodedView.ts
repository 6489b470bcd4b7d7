/**
 * A text read with its escapes decoded (HTML's entities, JSON's `\` escapes, a URL's `%XX`), and where each part of
 * that reading came from in the text: a secret found in the reading is hidden where the text writes it, whichever
 * characters the writer chose to escape and however (`&#43;`, `&#x2B;`, `&plus;`, `\u0026#x2f;`, `%2f`).
 */
export interface DecodedView {
  /** The text read. */
  readonly text: string;
  /** Where `text`'s units `[start, end)` are written in the text they were read from: `[from, to)`. */
  readonly spanOf: (start: number, end: number) => readonly [from: number, to: number];
  /**
   * Whether a span `[from, to)` of the text read cuts an escape the reading kept as written (a `%XX` of a character
   * no secret holds): its `%` or hex digits read as characters of their own, a secret found so is not there.
   */
  readonly cuts?: (from: number, to: number) => boolean;
}

/**
 * Each escape decoded, in the order of the text: where its units start and end in the reading (none for an
 * escape left out) and where it is written. Between two escapes the text is read as it is.
 */
class Escapes {
  readonly readAt: number[] = [];
  readonly readEnd: number[] = [];
  readonly writtenAt: number[] = [];
  readonly writtenEnd: number[] = [];

  add(readAt: number, units: number, writtenAt: number, writtenEnd: number): void {
    this.readAt.push(readAt);
    this.readEnd.push(readAt + units);
    this.writtenAt.push(writtenAt);
    this.writtenEnd.push(writtenEnd);
  }

  /** The last escape whose units start at or before `at` in the reading; -1 for none. */
  private before(at: number): number {
    let low = 0;
    let high = this.readAt.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if ((this.readAt[middle] as number) <= at) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    return found;
  }

  /** Where the unit at `at` of the reading is written: an escape's whole text, or one character. */
  private written(at: number): readonly [number, number] {
    const k = this.before(at);
    if (k < 0) return [at, at + 1];
    if (at < (this.readEnd[k] as number)) return [this.writtenAt[k] as number, this.writtenEnd[k] as number];
    const from = (this.writtenEnd[k] as number) + at - (this.readEnd[k] as number);
    return [from, from + 1];
  }

  spanOf = (start: number, end: number): readonly [number, number] => [
    (this.written(start) as readonly [number, number])[0],
    (this.written(end - 1) as readonly [number, number])[1],
  ];
}

/** `inner`'s reading read again (`outer`): a span of the second reading, where the first text writes it. */
export function composed(inner: DecodedView, outer: DecodedView): DecodedView {
  return {
    text: outer.text,
    spanOf: (start, end) => {
      const [from, to] = outer.spanOf(start, end);
      return inner.spanOf(from, to);
    },
    ...(inner.cuts === undefined ? {} : { cuts: inner.cuts }),
  };
}

/**
 * The characters HTML names that a secret may hold (ASCII punctuation, in HTML5's names, the uppercase
 * spellings HTML keeps for `&AMP;`, `&LT;`, `&GT;` and `&QUOT;` too).
 */
const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  AMP: "&",
  lt: "<",
  LT: "<",
  gt: ">",
  GT: ">",
  quot: '"',
  QUOT: '"',
  apos: "'",
  sol: "/",
  plus: "+",
  equals: "=",
  excl: "!",
  num: "#",
  dollar: "$",
  percnt: "%",
  lpar: "(",
  rpar: ")",
  ast: "*",
  midast: "*",
  comma: ",",
  period: ".",
  colon: ":",
  semi: ";",
  quest: "?",
  commat: "@",
  lsqb: "[",
  lbrack: "[",
  bsol: "\\",
  rsqb: "]",
  rbrack: "]",
  Hat: "^",
  lowbar: "_",
  UnderBar: "_",
  grave: "`",
  DiacriticalGrave: "`",
  lcub: "{",
  lbrace: "{",
  verbar: "|",
  vert: "|",
  VerticalLine: "|",
  rcub: "}",
  rbrace: "}",
  Tab: "\t",
  NewLine: "\n",
};
const LONGEST_NAME = 16;
const HASH = 0x23;
const SEMICOLON = 0x3b;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const isLetter = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);

/**
 * The numeric entity at `at` (`&#43;`, `&#x2B;`, `&#X2f;`, `&#x002f;`: decimal or hex in either case, any
 * number of leading zeros, ending in `;`): its character and where it ends; undefined for none, or one naming
 * no character (0, a surrogate, past U+10FFFF).
 */
function numericAt(text: string, at: number): { unit: string; end: number } | undefined {
  const value = numericValueAt(text, at);
  return value === undefined ? undefined : { unit: String.fromCodePoint(value), end: valueEnd };
}

/** Where the entity `numericValueAt` read last ends. */
let valueEnd = 0;

/** The code point of the numeric entity at `at`, its end left in `valueEnd`; undefined as `numericAt`. */
function numericValueAt(text: string, at: number): number | undefined {
  let i = at + 2;
  const hex = (text.charCodeAt(i) | 0x20) === 0x78;
  if (hex) i++;
  const digits = i;
  let value = 0;
  for (let c = text.charCodeAt(i); hex ? isHexDigit(c) : isDigit(c); c = text.charCodeAt(++i))
    if (value <= 0x10ffff) value = value * (hex ? 16 : 10) + (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
  if (i === digits || text.charCodeAt(i) !== SEMICOLON) return undefined;
  if (value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return undefined;
  valueEnd = i + 1;
  return value;
}

/** The named entity at `at` of those `NAMED` lists, ending in `;`; undefined for another. */
function namedAt(text: string, at: number): { unit: string; end: number } | undefined {
  let i = at + 1;
  while (i - at <= LONGEST_NAME && isLetter(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== SEMICOLON) return undefined;
  const unit = NAMED[text.slice(at + 1, i)];
  return unit === undefined ? undefined : { unit, end: i + 1 };
}

/**
 * A text as an HTML page shows it: each numeric entity (decimal or hex, either case, zero-padded or not) and
 * each named one of ASCII punctuation (`NAMED`) read as its character; any other `&` as it is. One pass, from
 * one `&` to the next.
 */
export function htmlView(text: string): DecodedView {
  const escapes = new Escapes();
  const parts: string[] = [];
  let length = 0;
  let from = 0;
  for (let at = text.indexOf("&"); at >= 0; at = text.indexOf("&", at + 1)) {
    const entity = text.charCodeAt(at + 1) === HASH ? numericAt(text, at) : namedAt(text, at);
    if (entity === undefined) continue;
    length += at - from;
    escapes.add(length, entity.unit.length, at, entity.end);
    if (at > from) parts.push(text.slice(from, at));
    parts.push(entity.unit);
    length += entity.unit.length;
    from = entity.end;
    at = entity.end - 1;
  }
  if (from === 0) return { text, spanOf: (start, end) => [start, end] };
  parts.push(text.slice(from));
  return { text: parts.join(""), spanOf: escapes.spanOf };
}

/**
 * A search for the entities `htmlView` reads as a character `wanted` takes (one of a secret's), from an index on:
 * where the next one is written, its `&` (or, `json`, the `\` of the `\u0026` a JSON encoder writes for that `&`);
 * -1 for none. Only an entity so read can make a secret's form appear in a reading that the text does not hold as
 * it is, so a text without one (`&amp;` where no secret has `&`) need not be read: one regular expression's search.
 */
export function entitySearch(
  wanted: (codePoint: number) => boolean,
  json: boolean,
): (text: string, from: number) => number {
  const names = Object.keys(NAMED).filter((name) => wanted((NAMED[name] as string).codePointAt(0) as number));
  const pattern = new RegExp(`${json ? "\\\\u0026" : "&"}(?:#|(?:${names.join("|") || "(?!)"});)`, "g");
  const ampersand = json ? 5 : 0;
  return (text, from) => {
    pattern.lastIndex = from;
    while (pattern.test(text)) {
      const end = pattern.lastIndex;
      if (text.charCodeAt(end - 1) !== HASH) return text.lastIndexOf(json ? "\\" : "&", end - 1);
      const value = numericValueAt(text, end - 2);
      if (value !== undefined && wanted(value)) return end - 2 - ampersand;
    }
    return -1;
  };
}

const PERCENT = 0x25;
const PLUS = 0x2b;
const SPACE = 0x20;
const hexValue = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);

/** The byte the `%XX` at `at` writes (two hex digits, either case); -1 for none. */
function percentByteAt(text: string, at: number): number {
  if (text.charCodeAt(at) !== PERCENT) return -1;
  const high = text.charCodeAt(at + 1);
  const low = text.charCodeAt(at + 2);
  return isHexDigit(high) && isHexDigit(low) ? hexValue(high) * 16 + hexValue(low) : -1;
}

/** The least code point of a UTF-8 sequence of one, two, three and four bytes: a smaller one is overlong. */
const LEAST_OF_LENGTH = [0, 0x80, 0x800, 0x10000];

/** Where the escapes `percentAt` read last end. */
let percentEnd = 0;

/**
 * The code point the `%XX` at `at` writes, its escapes' end left in `percentEnd`: an ASCII character's own, or the
 * UTF-8 sequence of one (`%c3%a9` for `é`, as `encodeURIComponent` writes it, in either case); -1 for none, or for
 * bytes of no character (a continuation byte alone, a sequence cut short, overlong or naming a surrogate).
 */
function percentAt(text: string, at: number): number {
  const first = percentByteAt(text, at);
  if (first < 0) return -1;
  if (first < 0x80) {
    percentEnd = at + 3;
    return first;
  }
  const more = first >= 0xf0 ? 3 : first >= 0xe0 ? 2 : first >= 0xc0 ? 1 : 0;
  if (more === 0 || first > 0xf4) return -1;
  let code = first & (0x3f >> more);
  let end = at + 3;
  for (let k = 0; k < more; k++, end += 3) {
    const next = percentByteAt(text, end);
    if (next < 0 || (next & 0xc0) !== 0x80) return -1;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < (LEAST_OF_LENGTH[more] as number) || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return -1;
  percentEnd = end;
  return code;
}

/**
 * A text as a URL's reader decodes it: each `%XX` (hex of either case: `%2f`, `%2F`) read as the character it
 * writes, a run of them as the UTF-8 of one (`%C3%A9`), each mapped back to the escapes that write it; any other
 * `%` as it is, and so is `+` (a secret's `+` may be written as it is beside escapes), unless `plusIsSpace`: a
 * form's reading, each `+` a space, as a form encoder writes one (Python's `urlencode`, .NET's `UrlEncode`). Only the
 * escapes of a character `wanted` takes are read (a secret's: no other can be part of one found in the reading); the
 * others stay as written. One pass, from one `%` (or `+`) to the next.
 */
export function percentView(
  text: string,
  wanted: (codePoint: number) => boolean = () => true,
  plusIsSpace = false,
): DecodedView {
  // The reading first, the map back only once a span of it is asked for: most texts read hold no secret.
  let out = "";
  let from = 0;
  eachPercentEscape(text, wanted, plusIsSpace, (at, code) => {
    out += text.slice(from, at) + String.fromCodePoint(code);
    from = percentEnd;
  });
  const cuts = (start: number, end: number) => cutsEscape(text, start, end);
  if (from === 0) return { text, spanOf: (start, end) => [start, end], cuts };
  let escapes: Escapes | undefined;
  const mapped = () => {
    const made = new Escapes();
    let length = 0;
    let last = 0;
    eachPercentEscape(text, wanted, plusIsSpace, (at, code) => {
      length += at - last;
      const units = code > 0xffff ? 2 : 1;
      made.add(length, units, at, percentEnd);
      length += units;
      last = percentEnd;
    });
    return made;
  };
  return {
    text: out + text.slice(from),
    spanOf: (start, end) => {
      escapes ??= mapped();
      return escapes.spanOf(start, end);
    },
    cuts,
  };
}

/**
 * Whether the span `[from, to)` of `text` starts or ends inside a `%XX` (after its `%`, or between its hex digits):
 * read as a URL, what it holds is not written there (`Fdead%26beef1` in `%2Fdead%26beef1`).
 */
export function cutsEscape(text: string, from: number, to: number): boolean {
  const inside = (at: number) => percentByteAt(text, at - 1) >= 0 || percentByteAt(text, at - 2) >= 0;
  return inside(from) || inside(to);
}

/**
 * Whether the `\` at `at` in `text` is the second of an escaped pair (`\\`): the run of backslashes ending with it
 * is of even length. A JSON form of a secret that begins with `\` (`\/abcd` for `/abcd`, as PHP writes `/`) is not
 * written there: that `\` belongs to the `\\` before it, and the form taken from it would leave the pair's first
 * `\` alone (`C:\[redacted]` for `C:\\/abcd`, which the JSON holding it no longer reads).
 */
export function secondOfEscapedPair(text: string, at: number): boolean {
  return text.charCodeAt(at) === BACKSLASH && insideEscape(text, at);
}

/**
 * Whether `at` in `text` is inside an escape, right after the `\` that begins it: after an odd run of
 * backslashes (`t` in `tab\there`, the second `\` of `C:\\/abcd`). A JSON-escaped form or echo of a secret found
 * from there reads the escape's second character as its own, and hiding it would leave the escape's `\` alone.
 */
export function insideEscape(text: string, at: number): boolean {
  let run = at;
  while (run > 0 && text.charCodeAt(run - 1) === BACKSLASH) run--;
  return (at - run) % 2 === 1;
}

/**
 * Each `%XX` escape of `text` (or UTF-8 run of them) read as a character `wanted` takes, in order, where it ends
 * left in `percentEnd`; with `plusIsSpace`, each `+` too, as a space.
 */
function eachPercentEscape(
  text: string,
  wanted: (codePoint: number) => boolean,
  plusIsSpace: boolean,
  each: (at: number, code: number) => void,
): void {
  const escapes = plusIsSpace ? /[%+]/g : /%/g;
  for (let found = escapes.exec(text); found !== null; found = escapes.exec(text)) {
    const at = found.index;
    if (text.charCodeAt(at) === PLUS) {
      percentEnd = at + 1;
      each(at, SPACE);
      continue;
    }
    const code = percentAt(text, at);
    if (code < 0 || !wanted(code)) continue;
    each(at, code);
    escapes.lastIndex = percentEnd;
  }
}

/**
 * A check for the `%XX` escapes `percentView` reads as a character `wanted` takes (one of a secret's), or as the
 * first byte of a character past ASCII (`nonAscii`: some secret has one): whether the text holds one. Only such an
 * escape can make a secret appear in the reading that the text does not hold as it is, so a text without one (a URL's
 * `%20` where no secret has a space) need not be read: one regular expression's search.
 */
export function percentSearch(
  wanted: (codePoint: number) => boolean,
  nonAscii: boolean,
): (text: string) => boolean {
  const bytes: string[] = [];
  for (let high = 0; high < 8; high++) {
    let lows = "";
    for (let low = 0; low < 16; low++)
      if (wanted(high * 16 + low))
        lows += low < 10 ? `${low}` : `${low.toString(16)}${low.toString(16).toUpperCase()}`;
    if (lows !== "") bytes.push(`${high}[${lows}]`);
  }
  if (nonAscii) bytes.push("[c-fC-F][0-9a-fA-F]");
  if (bytes.length === 0) return () => false;
  const pattern = new RegExp(`%(?:${bytes.join("|")})`);
  return (text) => text.includes("%") && pattern.test(text);
}

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
const QUOTE = 0x22;
const SLASH = 0x2f;
const HEX4 = /^[0-9a-fA-F]{4}$/;
/** The control characters JSON writes with a short escape (`\n`), by the letter of that escape. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * A text as the units of its JSON strings, one layer of escapes read as JSON.parse reads them, with where each unit
 * is written: backslashes go in pairs, `\\` read as one `\`, and only a backslash left over escapes what follows it:
 * `\u` and four hex digits read as its unit, a short escape as its control character (`\n`), `\"` and `\/` (as PHP's
 * json_encode writes `/`) as `"` and `/`, each written with its backslash. A backslash before anything else (no
 * escape of JSON's) is read as itself. JSON quoted in JSON (`\\u0026`, `\\\"`) is read a layer at a time: this
 * view's text read again (`composed`). HTML quoted in JSON (`\u0026#x2f;` as Go's encoding/json writes `&`) is read
 * as HTML again.
 */
export function jsonUnitsView(text: string): DecodedView {
  let at = text.indexOf("\\");
  if (at < 0) return { text, spanOf: (start, end) => [start, end] };
  const escapes = new Escapes();
  let out = "";
  let from = 0;
  while (at >= 0) {
    const next = text.charCodeAt(at + 1);
    let unit: string | undefined;
    let end = at + 2;
    if (next === BACKSLASH || next === QUOTE || next === SLASH) unit = text[at + 1] as string;
    else if (next === LETTER_U && HEX4.test(text.slice(at + 2, at + 6))) {
      unit = String.fromCharCode(Number.parseInt(text.slice(at + 2, at + 6), 16));
      end = at + 6;
    } else unit = SHORT_ESCAPES[text[at + 1] as string];
    if (unit === undefined) {
      // No escape: the backslash is read as it is, one unit for one character.
      at = text.indexOf("\\", at + 1);
      continue;
    }
    out += text.slice(from, at);
    escapes.add(out.length, unit.length, at, end);
    out += unit;
    from = end;
    at = text.indexOf("\\", end);
  }
  return { text: out + text.slice(from), spanOf: escapes.spanOf };
}

/** The most layers of JSON quoted in JSON `jsonLayers` reads (each halves a run of backslashes). */
const MAX_JSON_LAYERS = 8;

/**
 * A JSON string's readings, one for each layer of JSON quoting it (`jsonUnitsView`, then that read again, and so
 * on), each mapping back to `text`: up to `MAX_JSON_LAYERS`, and only while a reading still holds a backslash that
 * the next one reads as an escape. A secret's own `\` is in one of them as it is (`Zx9\\tQ` reads `Zx9\tQ` once
 * quoted, and only the next reading, of a text quoted twice, takes its `\t` for a tab).
 */
export function jsonLayers(text: string): DecodedView[] {
  const layers: DecodedView[] = [];
  let read = text;
  let view: DecodedView | undefined;
  while (layers.length < MAX_JSON_LAYERS && read.includes("\\")) {
    const next = jsonUnitsView(read);
    if (next.text === read) break;
    view = view === undefined ? next : composed(view, next);
    layers.push(view);
    read = next.text;
  }
  return layers;
}

/**
 * Where the JSON string around `at` is written: from past the `"` before it to the `"` after it that no odd run
 * of backslashes escapes (the text's start or end for none). A secret quoted in a JSON string is inside it.
 */
export function stringAround(text: string, at: number): readonly [number, number] {
  const escaped = (quote: number) => {
    let i = quote;
    while (i > 0 && text.charCodeAt(i - 1) === BACKSLASH) i--;
    return (quote - i) % 2 === 1;
  };
  let start = text.lastIndexOf('"', at - 1);
  while (start >= 0 && escaped(start)) start = start === 0 ? -1 : text.lastIndexOf('"', start - 1);
  let end = text.indexOf('"', at);
  while (end >= 0 && escaped(end)) end = text.indexOf('"', end + 1);
  return [start + 1, end < 0 ? text.length : end];
}

/** Spans of a text (`[from, to)`), found to hold a secret. */
export type Spans = Array<readonly [number, number]>;

/**
 * Where a reading's text holds each of `found`, as spans of the text it was read from (past `offset` in it). One
 * whose edge cuts an escape the reading kept as written (`cuts`: `Fdead&beef1` in the reading `%2Fdead&beef1`) is
 * not there: the text is left whole.
 */
export function collect(view: DecodedView, found: readonly string[], offset: number, spans: Spans): void {
  for (const needle of found)
    for (let at = view.text.indexOf(needle); at >= 0; ) {
      const [from, to] = view.spanOf(at, at + needle.length);
      if (view.cuts?.(from, to)) {
        at = view.text.indexOf(needle, at + 1);
        continue;
      }
      spans.push([offset + from, offset + to]);
      at = view.text.indexOf(needle, at + needle.length);
    }
}

/** `text` with each of `spans` (`[from, to)` pairs, in any order, overlapping or not) replaced by `replacement`. */
export function spansReplaced(
  text: string,
  spans: ReadonlyArray<readonly [number, number]>,
  replacement: string,
): string {
  if (spans.length === 0) return text;
  const sorted = [...spans].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let from = 0;
  for (const [start, end] of sorted) {
    if (end <= from) continue;
    if (start < from) {
      // Overlapping the span before: that span grows to take it whole.
      from = end;
      continue;
    }
    out += `${text.slice(from, start)}${replacement}`;
    from = end;
  }
  return out + text.slice(from);
}

import { graphemes } from "../graphemes.js";

/**
 * How a platform counts its message-size limit: UTF-16 characters, UTF-8 bytes, or the size of each
 * character as sent (a target that escapes text, e.g. Slack's `&lt;`, counts what the platform receives).
 */
export type SizeUnit = "chars" | "utf8" | ((ch: string) => number);

/** UTF-8 size of one character (a code point; a lone surrogate is sent as U+FFFD, 3 bytes). */
function utf8Size(ch: string): number {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  return code < 0x10000 ? 3 : 4;
}

const charSize = (unit: Exclude<SizeUnit, "chars">) => (unit === "utf8" ? utf8Size : unit);

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Length of the longest prefix of `text` that fits `limit` (never ends inside a surrogate pair). */
function fittingPrefix(text: string, limit: number, unit: SizeUnit): number {
  if (unit === "chars") {
    let end = Math.min(limit, text.length);
    if (end < text.length && end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    return end;
  }
  const sizeOfChar = charSize(unit);
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = sizeOfChar(ch);
    if (bytes + size > limit) break;
    bytes += size;
    end += ch.length;
  }
  return end;
}

/** Whether `text` fits `limit`, measuring no more of it than the limit. */
function fits(text: string, limit: number, unit: SizeUnit): boolean {
  return fittingPrefix(text, limit, unit) >= text.length;
}

export function sizeOf(text: string, unit: SizeUnit): number {
  if (unit === "chars") return text.length;
  if (unit === "utf8") return Buffer.byteLength(text, "utf8");
  let size = 0;
  for (const ch of text) size += unit(ch);
  return size;
}

/** How far around a hard cut to look for a grapheme-cluster boundary (first: a longer cluster widens it). */
const CLUSTER_WINDOW = 128;

/**
 * The last grapheme-cluster boundary of `text` at or before `end`, so a hard cut keeps an emoji sequence
 * (👨‍👩‍👧‍👦, 🇩🇪, 👍🏽) or a letter and its combining marks (é as e + U+0301) whole; `end` itself when the
 * cluster there starts at the beginning of `text` (one cluster longer than the limit is cut anyway).
 * Only the text shortly before `end` is segmented; when the cluster at `end` reaches back past it (a letter
 * with hundreds of combining marks), the window grows until the cluster's start is in it.
 */
function clusterBoundary(text: string, end: number): number {
  if (end >= text.length) return end;
  for (let window = CLUSTER_WINDOW; ; window *= 4) {
    const from = Math.max(0, end - window);
    let boundary = 0;
    for (const { index } of graphemes(text.slice(from, end + CLUSTER_WINDOW))) {
      if (index > end - from) break;
      boundary = index;
    }
    if (boundary > 0) return wholeFlags(text, from + boundary, end);
    if (from === 0) return end;
  }
}

/** Whether a regional indicator (🇦..🇿, U+1F1E6..U+1F1FF: two of them make a flag) starts at `at`. */
function isRegionalIndicator(text: string, at: number): boolean {
  const low = text.charCodeAt(at + 1);
  return text.charCodeAt(at) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
}

/**
 * `cut`, moved by one regional indicator (forward when that still ends by `end`) when it falls between the
 * two of a flag. Which two pair up depends on the whole run of them (🇩🇪🇫🇷 pairs from its first), which
 * a segmented window that starts inside the run cannot see: it would cut 🇩🇪 into 🇩 | 🇪, and every flag
 * after the cut would pair wrongly.
 */
function wholeFlags(text: string, cut: number, end: number): number {
  if (!isRegionalIndicator(text, cut)) return cut;
  let before = 0;
  for (let at = cut - 2; at >= 0 && isRegionalIndicator(text, at); at -= 2) before += 1;
  if (before % 2 === 0) return cut;
  if (cut + 2 <= end) return cut + 2;
  return cut > 2 ? cut - 2 : cut;
}

/**
 * Where to cut `text` at or before `end`: after the last newline, else after the last space or tab, else
 * at the last grapheme-cluster boundary, else at `end`.
 */
function cutPoint(text: string, end: number): number {
  const window = text.slice(0, end);
  const newline = window.lastIndexOf("\n");
  if (newline > 0) return newline + 1;
  const space = Math.max(window.lastIndexOf(" "), window.lastIndexOf("\t"));
  if (space > 0) return space + 1;
  return clusterBoundary(text, end);
}

/**
 * Splits `text` into parts of at most `limit` (in `unit`), in order, cutting on
 * line boundaries where possible, then on spaces, then between grapheme clusters, then anywhere (never
 * inside a surrogate pair). Joining the parts gives back `text`.
 */
export function splitMessage(text: string, limit: number, unit: SizeUnit = "chars"): string[] {
  if (!Number.isInteger(limit) || limit < 4)
    throw new RangeError(`message limit must be an integer >= 4, got ${limit}`);
  const parts: string[] = [];
  let rest = text;
  // Each step measures at most `limit` of the text (never all of the rest): a 1 MB reply to Slack, whose
  // size is counted character by character, must not hold the event loop for seconds.
  for (;;) {
    const end = fittingPrefix(rest, limit, unit);
    if (end >= rest.length) break;
    parts.push(rest.slice(0, cutPoint(rest, Math.max(end, firstCharLength(rest)))));
    rest = rest.slice(parts.at(-1)?.length);
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}

/** Length of the first character (code point) of `text`, in UTF-16 units. */
function firstCharLength(text: string): number {
  return (text.codePointAt(0) ?? 0) > 0xffff ? 2 : 1;
}

/** An open fenced code block: the line that opened it and its fence (``` or ~~~, 3 or more). */
interface Fence {
  readonly opener: string;
  readonly closer: string;
  /** The spaces before the opening fence (a block in a list item): the added fences keep them. */
  readonly indent: string;
  /** Offset in the chunk where the opening line starts, when it opened in that chunk. */
  readonly openedAt?: number;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HAS_FENCE = /^ {0,3}(?:`{3}|~{3})/m;

/** The code block still open after `chunk` (CommonMark fences), starting from `open`. */
function fenceAfter(chunk: string, open: Fence | undefined): Fence | undefined {
  let state = open;
  let at = 0;
  for (const rawLine of chunk.split("\n")) {
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    const match = FENCE_LINE.exec(line);
    if (match !== null) {
      const run = match[1] ?? "";
      const info = match[2] ?? "";
      if (state === undefined) {
        // A backtick run followed by more backticks on the line is inline code, not a fence.
        if (!(run.startsWith("`") && info.includes("`")))
          state = { opener: line.trim(), closer: run, indent: /^ */.exec(line)?.[0] ?? "", openedAt: at };
      } else if (run[0] === state.closer[0] && run.length >= state.closer.length && info.trim() === "") {
        state = undefined;
      }
    }
    at += rawLine.length + 1;
  }
  return state;
}

/** The first line of `text` (with its newline) when it closes the code block `open`. */
function closingLine(text: string, open: Fence): string | undefined {
  const newline = text.indexOf("\n");
  const line = newline === -1 ? text : text.slice(0, newline + 1);
  return fenceAfter(line, { opener: open.opener, closer: open.closer, indent: open.indent }) === undefined
    ? line
    : undefined;
}

/**
 * The longest prefix of `text` within `budget`, cut on a line, word or character boundary after its
 * first `keep` characters (at least one character).
 */
function chunkWithin(text: string, budget: number, unit: SizeUnit, keep = 0): string {
  const end = Math.max(fittingPrefix(text, budget, unit), firstCharLength(text));
  if (keep > 0 && end > keep) return text.slice(0, keep + cutPoint(text.slice(keep), end - keep));
  return text.slice(0, cutPoint(text, end));
}

/**
 * Like splitMessage, for platforms that render Markdown (Discord, Slack, Mattermost, WhatsApp, GitHub): a
 * cut inside a fenced code block closes the block at the end of the part and reopens it, with the same
 * opening line (language), at the start of the next, so every part renders its code as code. A cut
 * right after an opening fence line moves before that line. Texts without fences split as splitMessage.
 */
export function splitMarkdown(text: string, limit: number, unit: SizeUnit = "chars"): string[] {
  if (fits(text, limit, unit) || !HAS_FENCE.test(text)) return splitMessage(text, limit, unit);
  const parts: string[] = [];
  let rest = text;
  let open: Fence | undefined;
  while (rest.length > 0) {
    // An absurdly long info string is not repeated: the bare fence reopens the block.
    const reopen =
      open === undefined
        ? ""
        : `${open.indent}${open.opener.length > limit / 4 ? open.closer : open.opener}\n`;
    if (fits(rest, limit - sizeOf(reopen, unit), unit)) {
      parts.push(reopen + rest);
      break;
    }
    let reserve = 4; // "\n```", grown when the block open at the cut has a longer fence
    for (;;) {
      const budget = limit - sizeOf(reopen, unit) - reserve;
      if (budget < 1) return splitMessage(text, limit, unit);
      let chunk = chunkWithin(rest, budget, unit);
      let after = fenceAfter(chunk, open);
      // Do not end a part with an opening fence line and nothing of its block: move that line to the next
      // part, or, when the part starts with it and the block's first line is too long, cut inside that line.
      if (after?.openedAt !== undefined) {
        const tail = chunk.slice(after.openedAt);
        const newline = tail.indexOf("\n");
        if (newline === -1 || tail.slice(newline + 1).trim() === "") {
          if (after.openedAt > 0) chunk = chunk.slice(0, after.openedAt);
          else if (
            newline !== -1 &&
            !rest.slice(newline + 1, fittingPrefix(rest, budget, unit)).includes("\n")
          )
            chunk = chunkWithin(rest, budget, unit, newline + 1);
          after = fenceAfter(chunk, open);
        }
      }
      // A cut just before the block's own closing fence takes that line along (when it fits where the
      // added one would go): the next part then does not open an empty code block only to close it.
      if (after !== undefined && chunk.endsWith("\n")) {
        const line = closingLine(rest.slice(chunk.length), after);
        if (line !== undefined && sizeOf(line, unit) <= reserve) {
          chunk += line;
          after = undefined;
        }
      }
      const close =
        after === undefined ? "" : `${chunk.endsWith("\n") ? "" : "\n"}${after.indent}${after.closer}`;
      if (sizeOf(close, unit) > reserve) {
        reserve = sizeOf(close, unit);
        continue;
      }
      parts.push(reopen + chunk + close);
      rest = rest.slice(chunk.length);
      open =
        after === undefined
          ? undefined
          : { opener: after.opener, closer: after.closer, indent: after.indent };
      break;
    }
  }
  return parts;
}

const NOT_SENDABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with each lone surrogate (a JSON payload may carry `"\ud800"`) and each NUL (`"\u0000"`) replaced
 * by U+FFFD. JSON.stringify sends a lone surrogate as an escape that is no UTF-8 text, and Telegram refuses
 * the whole message ("text must be encoded in UTF-8"); a NUL is refused with HTTP 500 by platforms that
 * keep messages in PostgreSQL, which cannot store it (Mattermost: "We couldn't save the Post."), and no
 * retry changes that.
 */
export function wellFormed(text: string): string {
  return text.replace(NOT_SENDABLE, "\ufffd");
}

/**
 * The parts of `text` as a platform receives them (lone surrogates and NULs replaced by U+FFFD): split to `limit` (Markdown-aware when the platform
 * renders Markdown), without parts that are only whitespace — a cut just before trailing blank lines
 * would otherwise send a part that Telegram, Discord and Slack refuse as an empty message. A text that is
 * nothing but whitespace (or empty) still goes out as one message (delivery is attempted).
 */
export function messageParts(
  text: string,
  limit: number,
  options: { readonly unit?: SizeUnit; readonly markdown?: boolean } = {},
): string[] {
  const unit = options.unit ?? "chars";
  const sendable = wellFormed(text);
  const parts =
    options.markdown === true ? splitMarkdown(sendable, limit, unit) : splitMessage(sendable, limit, unit);
  if (parts.length === 1) return parts;
  const kept = parts.filter((part) => part.trim() !== "");
  return kept.length === 0 ? parts.slice(0, 1) : kept;
}

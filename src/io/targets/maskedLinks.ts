/**
 * Discord and Mattermost render `[text](url)` as a link that shows only its text, and Mattermost also a
 * `[text][ref]` (or `[ref]`) whose `[ref]: url` line is in the same post. Payload text is untrusted:
 * `[Approve in GitHub](https://evil.example/phish)` would be a link whose target the reader does not see. A
 * backslash between the `]` and the `(` (an escaped `(`, which both show as `(`), and one before the `[` of a
 * `[ref]: url` line, leave the text as it was written; a URL in it stays a plain link, showing its real target.
 *
 * Code is not rendered as links, and a backslash there would show: code is left as it is where the
 * platform reads it as code for certain, any other `](` gets its backslash, in code too.
 * - A fenced block: a line of 3 or more backticks (or tildes, on Mattermost) up to the first line of as
 *   many or more of the same character and nothing else. On Mattermost whatever came before it (a link's
 *   text never holds a block); on Discord, which ends a block at the first three backticks and whose link
 *   text may run over `]` and lines, only with no `[` before it and no three backticks inside it.
 * - A code span: its closing backticks are the first after the opening ones, there are as many, the
 *   opening ones start a word (a URL before them would take them in), it holds no blank line nor a line
 *   that starts a block (Mattermost ends the paragraph there), and no link could take it into its text: no
 *   `[` before it on Discord; on Mattermost none still open (each `]` closes one, a blank line all).
 */
export function defuseMaskedLinks(text: string, platform: Platform = "discord"): string {
  const mattermost = platform === "mattermost";
  let out = "";
  // The `[`s a link's text could still start at: on Discord any `[` so far, on Mattermost those not closed.
  let openBrackets = 0;
  // Mattermost's closing fence lines, read once the text has an opening one.
  let closers: ClosingFences | undefined;
  let i = 0;
  while (i < text.length) {
    if (i === 0 || text[i - 1] === "\n") {
      if (mattermost && /^[ \t]*(?:\n|$)/.test(text.slice(i, i + 100))) openBrackets = 0;
      const end = fencedBlockEnd(text, i, mattermost, openBrackets, () => {
        closers ??= new ClosingFences(text);
        return closers;
      });
      if (end > i) {
        out += text.slice(i, end);
        i = end;
        if (mattermost) openBrackets = 0;
        continue;
      }
    }
    const ch = text[i] as string;
    if (ch === "\\" && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1] as string)) {
      // An escaped character (`\[`, `\]`, a backtick) is a character, never syntax.
      out += text.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (ch === "`") {
      const run = /^`+/.exec(text.slice(i))?.[0].length ?? 1;
      const close = text.indexOf("`", i + run);
      const closeRun = close < 0 ? 0 : (/^`+/.exec(text.slice(close))?.[0].length ?? 0);
      if (
        close > i + run &&
        closeRun === run &&
        openBrackets === 0 &&
        startsWord(text, i) &&
        !BLOCK_INSIDE.test(text.slice(i + run, close))
      ) {
        out += text.slice(i, close + run);
        i = close + run;
      } else {
        out += text.slice(i, i + run);
        i += run;
      }
      continue;
    }
    if (ch === "]") {
      if (mattermost && openBrackets > 0) openBrackets -= 1;
      if (text[i + 1] === "(") {
        out += "]\\(";
        i += 2;
        continue;
      }
    }
    if (ch === "[") {
      // `[ref]: url` at a line's start defines a reference link (Mattermost); up to 3 spaces before it.
      if (atLineStart(text, i) && /^\[[^\]\n]+\]:/.test(text.slice(i))) out += "\\";
      openBrackets += 1;
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** Whose markdown the text is sent to: Discord's is the stricter reading, the default. */
export type Platform = "discord" | "mattermost";

/**
 * Inside a code span: a blank line, or a line that starts a block (a fence, a quote, a heading, a list item,
 * a rule, a table row, HTML), which ends Mattermost's paragraph and so the span.
 */
const BLOCK_INSIDE = /\n[ \t]*(?:\n|$)|\n {0,3}(?:```|~~~|[>#*+\-=_<|]|\d{1,9}[.)])/;

/**
 * Where the fenced code block whose opening line starts at `at` ends (after its closing line), or -1: no
 * opening fence there, none closing it, or (on Discord) a `[` before it or three backticks inside it.
 */
function fencedBlockEnd(
  text: string,
  at: number,
  mattermost: boolean,
  openBrackets: number,
  closers: () => ClosingFences,
): number {
  const lineEnd = (from: number) => {
    const nl = text.indexOf("\n", from);
    return nl < 0 ? text.length : nl;
  };
  const openEnd = lineEnd(at);
  const opening = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text.slice(at, openEnd));
  if (opening === null) return -1;
  const [, fence = "", info = ""] = opening;
  const tick = fence[0] === "`";
  if ((tick && info.includes("`")) || (!tick && !mattermost)) return -1;
  if (mattermost) return closers().after(openEnd, fence[0] as FenceChar, fence.length);
  if (openBrackets > 0) return -1;
  // Discord ends a block at the first three backticks after its opening ones: that line closes it or none.
  const ticks = text.indexOf("```", openEnd + 1);
  if (ticks < 0) return -1;
  const start = text.lastIndexOf("\n", ticks) + 1;
  const end = lineEnd(ticks);
  const closing = CLOSING_FENCE.exec(text.slice(start, end));
  return (closing?.[1]?.length ?? 0) >= fence.length ? end : -1;
}

type FenceChar = "`" | "~";

/** A line that closes a fenced block of its character, as long as its fence or shorter. */
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/**
 * The lines of a text that can close a fenced block (up to 3 spaces, 3 or more backticks or tildes, then
 * only spaces or tabs), read once, with the longest fence of each range of them: where the block an opening
 * line starts ends is found in a number of steps that grows with the log of their number, rather than by
 * reading the lines after it (a text of opening fences one shorter than the one before, then 150,000 lines,
 * read those lines once per fence: 1.1 MB held the gateway's main thread for 9 s).
 */
export class ClosingFences {
  /** Lines read and ranges looked at so far: the work done. */
  steps = 0;
  private readonly fences: Record<FenceChar, IndexedFences>;

  constructor(text: string) {
    const lines = { "`": new FenceLines(), "~": new FenceLines() };
    for (let start = 0; start <= text.length; ) {
      this.steps += 1;
      const nl = text.indexOf("\n", start);
      const end = nl < 0 ? text.length : nl;
      const fence = CLOSING_FENCE.exec(text.slice(start, end))?.[1];
      if (fence !== undefined) lines[fence[0] as FenceChar].add(start, end, fence.length);
      if (nl < 0) break;
      start = nl + 1;
    }
    this.fences = { "`": lines["`"].indexed(), "~": lines["~"].indexed() };
  }

  /** Where the first line starting after `from` that closes a fence of `length` `char`s ends, or -1. */
  after(from: number, char: FenceChar, length: number): number {
    const { starts, ends, longest } = this.fences[char];
    // The first closing line after `from`.
    let low = 0;
    let high = starts.length;
    while (low < high) {
      this.steps += 1;
      const mid = (low + high) >> 1;
      if ((starts[mid] as number) > from) high = mid;
      else low = mid + 1;
    }
    if (low >= starts.length) return -1;
    // From it, up while the ranges to its right hold no fence long enough, then down to the first that does.
    const size = longest.length / 2;
    let node = size + low;
    while ((longest[node] as number) < length) {
      while (node % 2 === 1) {
        this.steps += 1;
        if (node === 1) return -1;
        node = (node - 1) / 2;
      }
      this.steps += 1;
      node += 1;
    }
    while (node < size) {
      this.steps += 1;
      node *= 2;
      if ((longest[node] as number) < length) node += 1;
    }
    return ends[node - size] as number;
  }
}

/**
 * Whether `at` starts its line, after up to 3 spaces: looked for in `text`, a few characters back, never in
 * all of the text so far (a long text of many `[` took seconds).
 */
function atLineStart(text: string, at: number): boolean {
  let from = at;
  while (from > 0 && at - from < 4 && text[from - 1] === " ") from -= 1;
  return at - from <= 3 && (from === 0 || text[from - 1] === "\n");
}

/**
 * Whether the backticks at `at` start a word: the text before them back to a space or a line's start holds
 * only punctuation no URL begins with (`(`, `*`, `_`, quotes...).
 */
function startsWord(text: string, at: number): boolean {
  let from = at;
  while (from > 0 && /[(*_~|>"']/.test(text[from - 1] as string)) from -= 1;
  return from === 0 || /\s/.test(text[from - 1] as string);
}

/** The closing fence lines of one character, in order: where each starts and ends, and its fence's length. */
class FenceLines {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly lengths: number[] = [];

  add(start: number, end: number, length: number): void {
    this.starts.push(start);
    this.ends.push(end);
    this.lengths.push(length);
  }

  /**
   * With the longest fence of each range of lines: a binary tree in an array, node k over nodes 2k and
   * 2k + 1, line j at node size + j (the nodes past the last line hold 0).
   */
  indexed(): IndexedFences {
    let size = 1;
    while (size < this.lengths.length) size *= 2;
    const longest = new Array<number>(2 * size).fill(0);
    for (const [j, length] of this.lengths.entries()) longest[size + j] = length;
    for (let k = size - 1; k >= 1; k -= 1)
      longest[k] = Math.max(longest[2 * k] as number, longest[2 * k + 1] as number);
    return { starts: this.starts, ends: this.ends, longest };
  }
}

interface IndexedFences {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  readonly longest: readonly number[];
}

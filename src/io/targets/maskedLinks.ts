/**
 * Discord and Mattermost render `[text](url)` as a link that shows only its text, and Mattermost also a
 * `[text][ref]` (or `[ref]`) whose `[ref]: url` line is in the same post. Payload text is untrusted:
 * `[Approve in GitHub](https://evil.example/phish)` would be a link whose target the reader does not see. A
 * backslash between the `]` and the `(` (an escaped `(`, which both show as `(`), and one before the `[` of a
 * `[ref]: url` line, leave the text as it was written; a URL in it stays a plain link, showing its real target.
 *
 * Code spans and fenced blocks are not rendered as links, and a backslash there would show: they are left
 * as they are when both platforms read them as code for certain — their closing backticks are the first
 * after the opening ones, there are as many, no `[` came before them (a link starting there would take
 * them into its text), and the opening backticks start a word (a URL before them would take them in). Any
 * other `](` gets its backslash, in code too.
 */
export function defuseMaskedLinks(text: string): string {
  let out = "";
  let bracketSeen = false;
  let i = 0;
  while (i < text.length) {
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
      if (close > i + run && closeRun === run && !bracketSeen && startsWord(text, i)) {
        out += text.slice(i, close + run);
        i = close + run;
      } else {
        out += text.slice(i, i + run);
        i += run;
      }
      continue;
    }
    if (ch === "]" && text[i + 1] === "(") {
      out += "]\\(";
      i += 2;
      continue;
    }
    if (ch === "[") {
      // `[ref]: url` at a line's start defines a reference link (Mattermost); up to 3 spaces before it.
      const lineStart = out.lastIndexOf("\n") + 1;
      if (/^ {0,3}$/.test(out.slice(lineStart)) && /^\[[^\]\n]+\]:/.test(text.slice(i))) out += "\\";
      bracketSeen = true;
    }
    out += ch;
    i += 1;
  }
  return out;
}

/**
 * Whether the backticks at `at` start a word: the text before them back to a space or a line's start holds
 * only punctuation no URL begins with (`(`, `*`, `_`, quotes...).
 */
function startsWord(text: string, at: number): boolean {
  let from = at;
  while (from > 0 && !/\s/.test(text[from - 1] as string)) from -= 1;
  return /^[(*_~|>"']*$/.test(text.slice(from, at));
}

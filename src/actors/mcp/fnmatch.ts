/**
 * fnmatch-style globs, as Python's `fnmatch.fnmatchcase`: `*` any run of characters (dots
 * and slashes too), `?` one character, `[abc]` / `[a-z]` a set, `[!abc]` its complement, an unclosed `[`
 * a literal. Whole-name, case-sensitive; no other character is special.
 */
export function fnmatchRegExp(pattern: string): RegExp {
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i++] as string;
    if (c === "*") {
      if (!out.endsWith(".*")) out += ".*";
    } else if (c === "?") {
      out += ".";
    } else if (c === "[") {
      let j = i;
      if (pattern[j] === "!") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j++;
      if (j >= pattern.length) {
        out += "\\[";
        continue;
      }
      // A `]` right after `[` (or `[!`) is a member, as in Python; JS needs it (and `[`) escaped.
      let set = withoutEmptyRanges(pattern.slice(i, j)).replace(/\\/g, "\\\\").replace(/[[\]]/g, "\\$&");
      i = j + 1;
      if (set === "") out += "(?!)";
      else if (set === "!") out += ".";
      else {
        if (set.startsWith("!")) set = `^${set.slice(1)}`;
        else if (set.startsWith("^")) set = `\\${set}`;
        out += `[${set}]`;
      }
    } else {
      out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    }
  }
  // `u`: `?` and a set match one character, as in Python, also one outside the BMP (two code units).
  return new RegExp(`^(?:${out})$`, "su");
}

/**
 * A set's text without its reversed ranges, as Python drops them: `[a-cz-a]` is `[a-c]`, `[z-a]` an empty
 * set that matches nothing (`""`), `[!z-a]` any one character.
 */
function withoutEmptyRanges(body: string): string {
  const chunks: string[] = [];
  let start = 0;
  let k = body.startsWith("!") ? 2 : 1;
  for (k = body.indexOf("-", k); k >= 0; k = body.indexOf("-", k + 3)) {
    chunks.push(body.slice(start, k));
    start = k + 1;
  }
  const rest = body.slice(start);
  if (rest !== "" || chunks.length === 0) chunks.push(rest);
  else chunks[chunks.length - 1] += "-";
  for (let n = chunks.length - 1; n > 0; n--) {
    const before = chunks[n - 1] as string;
    const after = chunks[n] as string;
    if (before.slice(-1) > after.slice(0, 1)) chunks.splice(n - 1, 2, before.slice(0, -1) + after.slice(1));
  }
  return chunks.join("-");
}

/** True when `name` is one of `patterns` or matches one of them as a glob. */
export function fnmatchAny(patterns: readonly string[]): (name: string) => boolean {
  const globs = patterns.flatMap((p) => {
    try {
      return [fnmatchRegExp(p)];
    } catch {
      return []; // a set JavaScript cannot compile: such a pattern can only match by its exact text
    }
  });
  return (name) => patterns.includes(name) || globs.some((g) => g.test(name));
}

/** One part of a compiled glob: `*`, or a test of one character. */
type GlobPart = "*" | ((char: string) => boolean);

/**
 * fnmatch-style globs, as Python's `fnmatch.fnmatchcase`: `*` any run of characters (dots
 * and slashes too), `?` one character, `[abc]` / `[a-z]` a set, `[!abc]` its complement, an unclosed `[`
 * a literal. Whole-name, case-sensitive; no other character is special. A character is a code point, as
 * in Python: `?` and a set match one outside the BMP too (two UTF-16 code units).
 *
 * Compiled to parts matched by `globMatches`, not to a RegExp: a backtracking RegExp of several `*` with
 * text between them (`*a*a*a*z`) takes time exponential in their number to turn down a long name, and a
 * tool's name is the server's text. Throws when a set is one JavaScript cannot compile.
 */
export function compileGlob(pattern: string): GlobPart[] {
  const parts: GlobPart[] = [];
  const chars = Array.from(pattern);
  let i = 0;
  while (i < chars.length) {
    const c = chars[i++] as string;
    if (c === "*") {
      if (parts.at(-1) !== "*") parts.push("*");
    } else if (c === "?") {
      parts.push(() => true);
    } else if (c === "[") {
      let j = i;
      if (chars[j] === "!") j++;
      if (chars[j] === "]") j++;
      while (j < chars.length && chars[j] !== "]") j++;
      if (j >= chars.length) {
        parts.push((char) => char === "[");
        continue;
      }
      // A `]` right after `[` (or `[!`) is a member, as in Python; JS needs it (and `[`) escaped.
      let set = withoutEmptyRanges(chars.slice(i, j).join(""))
        .replace(/\\/g, "\\\\")
        .replace(/[[\]]/g, "\\$&");
      i = j + 1;
      if (set === "") parts.push(() => false);
      else if (set === "!") parts.push(() => true);
      else {
        if (set.startsWith("!")) set = `^${set.slice(1)}`;
        else if (set.startsWith("^")) set = `\\${set}`;
        const one = new RegExp(`^[${set}]$`, "su");
        parts.push((char) => one.test(char));
      }
    } else {
      parts.push((char) => char === c);
    }
  }
  return parts;
}

/**
 * Whether `name` matches the compiled glob, in time proportional to the name's length times the parts'
 * count at most: the classic wildcard match, which on a mismatch goes back only to the last `*` (what an
 * earlier `*` took more of could only be taken by the last one as well).
 */
export function globMatches(parts: readonly GlobPart[], name: string): boolean {
  const chars = Array.from(name);
  let p = 0;
  let c = 0;
  let star = -1;
  let resume = 0;
  while (c < chars.length) {
    const part = parts[p];
    if (part === "*") {
      star = p++;
      resume = c;
    } else if (part !== undefined && part(chars[c] as string)) {
      p++;
      c++;
    } else if (star >= 0) {
      p = star + 1;
      c = ++resume;
    } else return false;
  }
  while (parts[p] === "*") p++;
  return p === parts.length;
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
      return [compileGlob(p)];
    } catch {
      return []; // a set JavaScript cannot compile: such a pattern can only match by its exact text
    }
  });
  return (name) => patterns.includes(name) || globs.some((g) => globMatches(g, name));
}

import type { RE2JS } from "re2js";
import { requiredAtFirstUse } from "../requiredAtFirstUse.js";

/** `regex` filters: RE2 (linear time, no backreferences or lookaround), compiled once per pattern. */

// Required at the first pattern: a start whose routes, subscriptions and commands hold no `regex` filter
// does not load re2js (~310 KB of the bundle). Config validation checks each pattern as it is read, so a
// gateway with one has it loaded before it serves its first request.
const re2js = requiredAtFirstUse<typeof import("re2js")>("re2js");
const engine = () => re2js().RE2JS;

const REGEX_CACHE_LIMIT = 512;
const regexCache = new Map<string, RE2JS | null>();

const HEX = /^[0-9A-Fa-f]+$/;

/** Python's repeat with its minimum left out: `{,n}` (0 to n) and `{,}` (0 or more). */
const OMITTED_MIN = /^\{,([0-9]*)\}/;

/**
 * What a pattern written for Python or JavaScript means, spelled as RE2 reads it: the escapes `\uXXXX`,
 * `\u{X…}`, `\UXXXXXXXX` → `\x{…}`, Python's end-of-text `\Z` → `\z`, and Python's `{,n}` after something
 * to repeat → `{0,n}` (RE2, as Go, would take `\d{,3}` for the literal text `{,3}`, so the pattern would
 * silently never match). Inside a `[...]` class a brace is a member, as in both. Everything else is left
 * to RE2.
 */
export function toRe2(pattern: string): string {
  if (!pattern.includes("\\") && !pattern.includes("{,")) return pattern;
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "\\" && pattern[i + 1] === "Q") {
      // `\Q...\E` (RE2's quoted text): taken as written, braces and escapes included.
      const end = pattern.indexOf("\\E", i + 2);
      const last = end === -1 ? pattern.length - 1 : end + 1;
      out += pattern.slice(i, last + 1);
      i = last;
      continue;
    }
    if (c === "\\" && i + 1 < pattern.length) {
      const [text, last] = re2Escape(pattern, i);
      out += text;
      i = last;
      continue;
    }
    if (inClass) {
      // `[[:alpha:]]`: the POSIX class's own brackets do not end the class.
      const posixEnd = c === "[" && pattern[i + 1] === ":" ? pattern.indexOf(":]", i + 2) : -1;
      if (posixEnd !== -1) {
        out += pattern.slice(i, posixEnd + 2);
        i = posixEnd + 1;
        continue;
      }
      if (c === "]") inClass = false;
      out += c;
      continue;
    }
    if (c === "[") {
      // A `]` first in the class (after an optional `^`) is a member, not its end.
      let head = "[";
      if (pattern[i + 1] === "^") head += "^";
      if (pattern[i + head.length] === "]") head += "]";
      out += head;
      i += head.length - 1;
      inClass = true;
      continue;
    }
    // Where Python has nothing to repeat (`({,3}`), RE2 refuses `{0,3}` too: the pattern is refused at load.
    const omitted = c === "{" ? OMITTED_MIN.exec(pattern.slice(i, i + 24)) : null;
    if (omitted !== null) {
      out += `{0,${omitted[1]}}`;
      i += omitted[0].length - 1;
      continue;
    }
    out += c;
  }
  return out;
}

/** The escape at `pattern[i]` (a backslash) in RE2's spelling, and the index of its last character. */
function re2Escape(pattern: string, i: number): [string, number] {
  const next = pattern[i + 1];
  const braced = next === "u" && pattern[i + 2] === "{" ? pattern.indexOf("}", i + 3) : -1;
  if (braced !== -1 && HEX.test(pattern.slice(i + 3, braced))) {
    return [`\\x{${pattern.slice(i + 3, braced)}}`, braced];
  }
  if (next === "u" && HEX.test(pattern.slice(i + 2, i + 6)) && i + 6 <= pattern.length) {
    return [`\\x{${pattern.slice(i + 2, i + 6)}}`, i + 5];
  }
  if (next === "U" && HEX.test(pattern.slice(i + 2, i + 10)) && i + 10 <= pattern.length) {
    return [`\\x{${pattern.slice(i + 2, i + 10)}}`, i + 9];
  }
  return [next === "Z" ? "\\z" : `\\${next}`, i + 1];
}

/** Compiled once per pattern; an invalid pattern is remembered as `null`. */
export function compiled(pattern: string): RE2JS | null {
  const cached = regexCache.get(pattern);
  if (cached !== undefined) return cached;
  // Outside the try: a failure to load re2js (a process at its limit on open files) is no invalid pattern.
  const re2 = engine();
  let re: RE2JS | null;
  try {
    re = re2.compile(toRe2(pattern));
  } catch {
    re = null;
  }
  if (regexCache.size >= REGEX_CACHE_LIMIT) regexCache.clear();
  regexCache.set(pattern, re);
  return re;
}

/** Why a `regex` pattern cannot be used (RE2 syntax: no backreferences or lookaround), or undefined. */
export function regexProblem(pattern: string): string | undefined {
  const re2 = engine();
  try {
    re2.compile(toRe2(pattern));
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const LOOKAROUND = /\(\?<?[=!]/;
const BACKREFERENCE = /\\[1-9]|\\k[<{']|\(\?P=/;

/**
 * What to do about a pattern RE2 refused, by what it uses: lookaround (which RE2 reports for a lookbehind
 * as an "invalid named capture") and backreferences have no RE2 form; any other refusal is a syntax error
 * its own message names, and gets no hint.
 */
export function regexHint(pattern: string): string {
  if (LOOKAROUND.test(pattern))
    return ' — RE2 has no lookahead or lookbehind: express "does not match" with not: {field: ..., regex: ...}';
  if (BACKREFERENCE.test(pattern))
    return " — RE2 has no backreferences: match each part with its own pattern, or compare the fields in a script";
  return "";
}

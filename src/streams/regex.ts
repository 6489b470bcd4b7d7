import { RE2JS } from "re2js";

/** `regex` filters: RE2 (linear time, no backreferences or lookaround), compiled once per pattern. */

const REGEX_CACHE_LIMIT = 512;
const regexCache = new Map<string, RE2JS | null>();

const HEX = /^[0-9A-Fa-f]+$/;

/**
 * Escapes that Python and JavaScript patterns use but RE2 spells differently: `\uXXXX`, `\u{X…}`,
 * `\UXXXXXXXX` → `\x{…}`, and Python's end-of-text `\Z` → `\z`. Everything else is left to RE2.
 */
export function toRe2(pattern: string): string {
  if (!pattern.includes("\\")) return pattern;
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c !== "\\" || i + 1 >= pattern.length) {
      out += c;
      continue;
    }
    const next = pattern[i + 1];
    const braced = next === "u" && pattern[i + 2] === "{" ? pattern.indexOf("}", i + 3) : -1;
    if (braced !== -1 && HEX.test(pattern.slice(i + 3, braced))) {
      out += `\\x{${pattern.slice(i + 3, braced)}}`;
      i = braced;
    } else if (next === "u" && HEX.test(pattern.slice(i + 2, i + 6)) && i + 6 <= pattern.length) {
      out += `\\x{${pattern.slice(i + 2, i + 6)}}`;
      i += 5;
    } else if (next === "U" && HEX.test(pattern.slice(i + 2, i + 10)) && i + 10 <= pattern.length) {
      out += `\\x{${pattern.slice(i + 2, i + 10)}}`;
      i += 9;
    } else {
      out += next === "Z" ? "\\z" : `\\${next}`;
      i += 1;
    }
  }
  return out;
}

/** Compiled once per pattern; an invalid pattern is remembered as `null`. */
export function compiled(pattern: string): RE2JS | null {
  const cached = regexCache.get(pattern);
  if (cached !== undefined) return cached;
  let re: RE2JS | null;
  try {
    re = RE2JS.compile(toRe2(pattern));
  } catch {
    re = null;
  }
  if (regexCache.size >= REGEX_CACHE_LIMIT) regexCache.clear();
  regexCache.set(pattern, re);
  return re;
}

/** Why a `regex` pattern cannot be used (RE2 syntax: no backreferences or lookaround), or undefined. */
export function regexProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(toRe2(pattern));
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

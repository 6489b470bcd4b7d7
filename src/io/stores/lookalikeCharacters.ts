import { terminalText } from "../terminalText.js";

/** Dashes a document or chat app puts where a hyphen was typed (en and em dash, minus sign, ...). */
const DASHES = /[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]/g;
/** Characters that show as nothing or as a space (zero-width ones, no-break spaces, a byte order mark). */
const INVISIBLE = /[\u00a0\u00ad\u180e\u2000-\u200f\u202f\u205f\u2060-\u2064\u3000\ufeff]/;

const codePoint = (char: string): string =>
  `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * What is wrong with a schedule field holding a character outside ASCII, which cron-parser says only as
 * `Invalid characters, got value: 1–5` (the en dash looking like the hyphen meant): the character by its
 * code point, and the field to write when it only looks like a cron character (a dash pasted from a
 * document, fullwidth digits, an invisible character). Undefined for an ASCII field.
 */
export function lookalikeCharacter(field: string): string | undefined {
  const foreign = [...field].find((char) => (char.codePointAt(0) as number) > 0x7e);
  if (foreign === undefined) return undefined;
  const fixed = [...field]
    .filter((char) => !INVISIBLE.test(char))
    .map((char) => {
      const code = char.codePointAt(0) as number;
      // Fullwidth forms of ASCII (０, ＊, ／, ，), as an East Asian input method types them.
      return code >= 0xff01 && code <= 0xff5e ? String.fromCodePoint(code - 0xfee0) : char;
    })
    .join("")
    .replace(DASHES, "-");
  const ascii = /^[\x21-\x7e]+$/.test(fixed);
  const what = INVISIBLE.test(foreign)
    ? `an invisible character (${codePoint(foreign)}) is in it`
    : `"${foreign}" (${codePoint(foreign)}) is no cron character`;
  return `${what}${ascii ? ` — write "${fixed}"` : ""}`;
}

/** A field as a message shows it: an invisible character written as `\u200b`, not left unseen. */
export function shownField(field: string): string {
  return terminalText(field).replace(
    new RegExp(INVISIBLE.source, "g"),
    (char) => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, "0")}`,
  );
}

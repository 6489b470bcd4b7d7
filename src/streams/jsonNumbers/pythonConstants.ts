/**
 * Python's `json.dumps` writes a float that is not finite as `NaN`, `Infinity` or `-Infinity` (its
 * `allow_nan` is on by default), words JSON does not have, so a route script's `print(json.dumps(d))`
 * of a ratio that came out NaN would be no JSON object. `nonFiniteAsNull` gives the text with each such
 * constant outside strings written as `null`, what `JSON.stringify` makes of them (undefined when there is
 * none). It only rewrites text that is no JSON already: whatever is still not JSON after it stays text.
 */

const CONSTANTS = ["-Infinity", "Infinity", "NaN"] as const;

/** A character that continues a word: `NaNa` or `Infinity2` is no constant. */
const WORD = /[\w$]/;

export function nonFiniteAsNull(text: string): string | undefined {
  let out = "";
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // A string: its text is never rewritten (a backslash escapes the character after it).
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    const word = CONSTANTS.find((constant) => text.startsWith(constant, i));
    if (word !== undefined && !WORD.test(text[i - 1] ?? "") && !WORD.test(text[i + word.length] ?? "")) {
      out += `${text.slice(copied, i)}null`;
      i += word.length;
      copied = i;
      continue;
    }
    i++;
  }
  return copied === 0 ? undefined : out + text.slice(copied);
}

/** Scripts whose letters a zero-width joiner or non-joiner visibly reshapes (Arabic-script joining, Indic conjuncts). */
const SHAPED =
  "\\p{sc=Arabic}\\p{sc=Syriac}\\p{sc=Nko}\\p{sc=Mongolian}\\p{sc=Devanagari}\\p{sc=Bengali}\\p{sc=Gurmukhi}" +
  "\\p{sc=Gujarati}\\p{sc=Oriya}\\p{sc=Tamil}\\p{sc=Telugu}\\p{sc=Kannada}\\p{sc=Malayalam}\\p{sc=Sinhala}";
/** An emoji as it ends before the joiner of a ZWJ sequence: with a skin tone or the emoji presentation selector. */
const EMOJI_BEFORE_JOINER = "\\p{Extended_Pictographic}[\\u{1f3fb}-\\u{1f3ff}\\ufe0f]?";
/** Escaped wherever they are (the joiners U+200C and U+200D are escaped unless they join, see `HIDDEN`). */
const ALWAYS =
  "\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b\\u200e\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff";
/** A quick first look: most text holds none of these, and is then returned as it is. */
const MAYBE = new RegExp(`[${ALWAYS}\\u200c\\u200d]`);

/**
 * What a terminal acts on or hides instead of showing as itself:
 * - C0 controls except tab and newline, DEL and C1 controls (escape sequences, `\r` overwriting a line);
 * - characters that change how the text around them is displayed without showing themselves: bidi
 *   embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
 *   zero-width and invisible characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, soft hyphen
 *   U+00AD), line and paragraph separators (U+2028, U+2029) — a "Trojan Source" reordering that would
 *   make an id or a description read as something else.
 * Joiners that are part of legitimate text stay: a zero-width joiner between two emoji (👩‍💻, 🏳️‍🌈), and a
 * zero-width (non-)joiner between two letters of a script whose shaping it changes visibly (Persian
 * "می‌خواهم", Devanagari "क्‍ष"). Anywhere else (inside a Latin word, where it only hides) it is escaped.
 */
const HIDDEN = new RegExp(
  `[${ALWAYS}]` +
    `|[\\u200c\\u200d](?!(?<=[${SHAPED}][\\u200c\\u200d])[${SHAPED}]|(?<=${EMOJI_BEFORE_JOINER}\\u200d)\\p{Extended_Pictographic})`,
  "gu",
);

/**
 * Text for the terminal that may quote a remote party (an MCP server's tool description or error body, an
 * authorization server's answer, a webhook sender's delivery id or event type, an install link): each
 * character of `HIDDEN` is shown as `\u001b`, `\u202e` and so on, so the text cannot erase lines, retitle
 * the window, fake output or reorder what is shown. Newlines and tabs stay (messages list one problem per
 * line), and so does other non-ASCII text: accents, CJK, right-to-left scripts, emoji.
 */
export function terminalText(text: string): string {
  if (!MAYBE.test(text)) return text;
  return text.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

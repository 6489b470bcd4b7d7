/**
 * What a terminal acts on or hides instead of showing as itself:
 * - C0 controls except tab and newline, DEL and C1 controls (escape sequences, `\r` overwriting a line);
 * - characters that change how the text around them is displayed without showing themselves: bidi
 *   embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
 *   zero-width and invisible characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, soft hyphen
 *   U+00AD), line and paragraph separators (U+2028, U+2029) — a "Trojan Source" reordering that would
 *   make an id or a description read as something else.
 * A zero-width joiner between two emoji (👩‍💻, 🏳️‍🌈) is part of the emoji and stays; elsewhere it is escaped.
 */
const HIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\u200d(?!(?<=\p{Extended_Pictographic}[\u{1f3fb}-\u{1f3ff}\ufe0f]?\u200d)\p{Extended_Pictographic})/gu;

/**
 * Text for the terminal that may quote a remote party (an MCP server's tool description or error body, an
 * authorization server's answer, a webhook sender's delivery id or event type, an install link): each
 * character of `HIDDEN` is shown as `\u001b`, `\u202e` and so on, so the text cannot erase lines, retitle
 * the window, fake output or reorder what is shown. Newlines and tabs stay (messages list one problem per
 * line), and so does other non-ASCII text: accents, CJK, right-to-left scripts, emoji.
 */
export function terminalText(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The first `max` UTF-16 units of `text` (as JavaScript counts characters), one fewer where the last of
 * them is the first half of an emoji or another character outside the Basic Multilingual Plane: half of
 * one is no text, and a file, a terminal or a platform gets it as U+FFFD (`�`).
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * The first `limit` characters of `text`, a character being a Unicode code point: an emoji or another
 * character outside the Basic Multilingual Plane is one character (two UTF-16 units), as in Python's
 * `text[:limit]`, so a value of emoji is cut at `limit` of them, not half as many. Text of at most
 * `limit` UTF-16 units has at most that many characters and is returned at once.
 */
export function firstCharacters(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = text.slice(0, limit);
  // The usual text (no character outside the BMP among the first `limit`): one unit per character.
  if (!SURROGATE.test(head)) return head;
  let end = 0;
  for (let characters = 0; characters < limit && end < text.length; characters++) {
    const unit = text.charCodeAt(end);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

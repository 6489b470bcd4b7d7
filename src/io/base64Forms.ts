/**
 * The shortest base64 text hidden as a secret's: 16 characters carry 96 bits of it, which no ordinary text nor
 * another base64 run holds by chance; a shorter one would cut pieces out of unrelated base64 (an image, a hash).
 */
export const MIN_BASE64_FORM = 16;

/** The base64url spelling of a base64 text: the same text when it has neither `+` nor `/`. */
const base64url = (base64: string) =>
  base64.includes("+") || base64.includes("/") ? base64.replaceAll("+", "-").replaceAll("/", "_") : base64;

/**
 * A secret as base64 (and base64url) text may carry it: encoded alone, padded and unpadded, and inside a longer
 * run (`Basic <base64 of user:secret>`, a tool that encodes a whole config). There the characters it gives depend
 * on its offset mod 3 in the encoded bytes, so each of the three alignments has its own core: the encoding of the
 * secret after 0, 1 or 2 unknown bytes, without the characters that also hold bits of the unknown neighbours.
 * Only forms of at least `MIN_BASE64_FORM` characters: a secret under 13 bytes has some or none.
 */
export function base64Forms(secret: string): string[] {
  const size = Buffer.byteLength(secret, "utf8");
  // The secret after two bytes: encoded from offset 2, 1 or 0, it follows 0, 1 or 2 unknown bytes.
  const framed = Buffer.alloc(size + 2);
  framed.write(secret, 2, "utf8");
  const padded = framed.toString("base64", 2);
  const forms = [padded, padded.slice(0, Math.ceil((8 * size) / 6))];
  for (let before = 0; before < 3; before++) {
    const encoded = before === 0 ? padded : framed.toString("base64", 2 - before);
    // A character holds 6 bits: the first whole one after the unknown bytes, the last before what follows.
    forms.push(encoded.slice(Math.ceil((8 * before) / 6), Math.floor((8 * (before + size)) / 6)));
  }
  const long = forms.filter((form) => form.length >= MIN_BASE64_FORM);
  return [...new Set([...long, ...long.map(base64url)])];
}

/** The length of the pieces a text is sampled for. */
const PIECE = 2;
/** Needles from this length on are found by sampling (a base64 form of a secret is never shorter). */
const MIN_SAMPLED = 16;
/**
 * Sampling costs a lookup every `stride` characters, a search for each needle one native scan per needle:
 * below this product of stride and long needles, the searches cost less.
 */
const MIN_SAMPLED_WORK = 64;

/** The `PIECE` characters of `text` from `at` as one 16-bit key: their low bytes. */
function pieceKey(text: string, at: number): number {
  return (text.charCodeAt(at) & 0xff) | ((text.charCodeAt(at + 1) & 0xff) << 8);
}

/** Whether a text holds one of the needles `containsAnyOf` was given. */
export type ContainsAny = (text: string) => boolean;

/**
 * Whether a text holds any of `needles`, in one pass for many long ones: an occurrence of a needle of length
 * `m` or more spans `m - PIECE + 1` starts of a piece, so sampling a piece every that many characters lands
 * inside each occurrence; only where the sampled piece is one of some needle's pieces is that needle compared
 * there. Needles shorter than `MIN_SAMPLED` (and all of them, when few) are searched for one by one.
 */
export function containsAnyOf(needles: readonly string[]): ContainsAny {
  const short = needles.filter((needle) => needle.length < MIN_SAMPLED);
  const long = needles.filter((needle) => needle.length >= MIN_SAMPLED);
  const stride = Math.min(...long.map((needle) => needle.length)) - PIECE + 1;
  if (long.length === 0 || long.length * stride < MIN_SAMPLED_WORK)
    return (text) => needles.some((needle) => text.includes(needle));
  // One bit per key, so most samples are passed over without a lookup of the needles holding the piece.
  const keyed = new Uint32Array(65536 / 32);
  const piecesOf = new Map<number, Array<readonly [needle: string, offset: number]>>();
  for (const needle of long)
    for (let offset = 0; offset + PIECE <= needle.length; offset++) {
      const key = pieceKey(needle, offset);
      keyed[key >>> 5] = (keyed[key >>> 5] as number) | (1 << (key & 31));
      const pieces = piecesOf.get(key);
      if (pieces === undefined) piecesOf.set(key, [[needle, offset]]);
      else pieces.push([needle, offset]);
    }
  return (text) => {
    for (const needle of short) if (text.includes(needle)) return true;
    for (let at = 0; at + PIECE <= text.length; at += stride) {
      const key = pieceKey(text, at);
      if (((keyed[key >>> 5] as number) & (1 << (key & 31))) === 0) continue;
      for (const [needle, offset] of piecesOf.get(key) ?? [])
        if (at >= offset && text.startsWith(needle, at - offset)) return true;
    }
    return false;
  };
}

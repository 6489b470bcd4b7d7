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

/** The needles a text holds, of those `occurringOf` was given. */
export type Occurring = (text: string) => string[];

/**
 * The long needles' pieces, for a search that samples a piece every `stride` characters; undefined when a
 * search for each needle costs less (no long needle, or few).
 */
interface Sampled {
  readonly short: readonly string[];
  readonly stride: number;
  /** One bit per key, so most samples are passed over without a lookup of the needles holding the piece. */
  readonly keyed: Uint32Array;
  readonly long: readonly string[];
  /**
   * For each key, where the piece is in the long needles: pairs of a needle's index in `long` and the piece's
   * offset in it, in one array of numbers (no object per piece: an index of thousands of secrets' forms holds
   * hundreds of thousands of pieces).
   */
  readonly piecesOf: ReadonlyMap<number, readonly number[]>;
}

function sampled(needles: readonly string[]): Sampled | undefined {
  const short = needles.filter((needle) => needle.length < MIN_SAMPLED);
  const long = needles.filter((needle) => needle.length >= MIN_SAMPLED);
  const stride = Math.min(...long.map((needle) => needle.length)) - PIECE + 1;
  if (long.length === 0 || long.length * stride < MIN_SAMPLED_WORK) return undefined;
  const keyed = new Uint32Array(65536 / 32);
  const piecesOf = new Map<number, number[]>();
  for (const [index, needle] of long.entries())
    for (let offset = 0; offset + PIECE <= needle.length; offset++) {
      const key = pieceKey(needle, offset);
      keyed[key >>> 5] = (keyed[key >>> 5] as number) | (1 << (key & 31));
      const pieces = piecesOf.get(key);
      if (pieces === undefined) piecesOf.set(key, [index, offset]);
      else pieces.push(index, offset);
    }
  return { short, long, stride, keyed, piecesOf };
}

/**
 * Each long needle found at a sample of `text` (a needle once for each sample inside an occurrence), until
 * `found` returns true; whether it did.
 */
function scan(index: Sampled, text: string, found: (needle: string) => boolean): boolean {
  const { long, stride, keyed, piecesOf } = index;
  for (let at = 0; at + PIECE <= text.length; at += stride) {
    const key = pieceKey(text, at);
    if (((keyed[key >>> 5] as number) & (1 << (key & 31))) === 0) continue;
    const pieces = piecesOf.get(key) as readonly number[];
    for (let i = 0; i < pieces.length; i += 2) {
      const offset = pieces[i + 1] as number;
      if (at < offset) continue;
      const needle = long[pieces[i] as number] as string;
      if (text.startsWith(needle, at - offset) && found(needle)) return true;
    }
  }
  return false;
}

/**
 * Whether a text holds any of `needles`, in one pass for many long ones: an occurrence of a needle of length
 * `m` or more spans `m - PIECE + 1` starts of a piece, so sampling a piece every that many characters lands
 * inside each occurrence; only where the sampled piece is one of some needle's pieces is that needle compared
 * there. Needles shorter than `MIN_SAMPLED` (and all of them, when few) are searched for one by one.
 */
export function containsAnyOf(needles: readonly string[]): ContainsAny {
  const index = sampled(needles);
  if (index === undefined) return (text) => needles.some((needle) => text.includes(needle));
  return (text) => {
    for (const needle of index.short) if (text.includes(needle)) return true;
    return scan(index, text, () => true);
  };
}

/**
 * The needles a text holds, each once, in the same one pass as `containsAnyOf`: every sample is looked up,
 * since each occurrence of each long needle holds one.
 */
export function occurringOf(given: readonly string[]): Occurring {
  const needles = [...new Set(given)];
  const index = sampled(needles);
  if (index === undefined) return (text) => needles.filter((needle) => text.includes(needle));
  return (text) => {
    const found = new Set(index.short.filter((needle) => text.includes(needle)));
    scan(index, text, (needle) => {
      found.add(needle);
      return false;
    });
    return [...found];
  };
}

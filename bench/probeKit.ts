// What the randomized probes (bench/crashLoop.ts, bench/burstProbe.ts) share: their command-line options,
// a seeded random stream (so a failing seed can be run again), and the list of problems found.

/** `--name value` from `args`, else `fallback`. */
export function optionOf(args: readonly string[]): (name: string, fallback: string) => string {
  return (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
  };
}

/** Mulberry32: numbers in [0, 1) that the same seed repeats, and a pick of one element by them. */
export function seededRandom(seed: number): { rnd: () => number; pick: <T>(xs: readonly T[]) => T } {
  let s = seed >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { rnd, pick: <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Problems found, each printed as it is found. */
export function problemList(): { problems: string[]; problem: (text: string) => void } {
  const problems: string[] = [];
  return {
    problems,
    problem: (text) => {
      problems.push(text);
      console.log(`!! ${text}`);
    },
  };
}

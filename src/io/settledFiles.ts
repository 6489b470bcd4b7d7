import { readFileSync } from "node:fs";
import { type Clock, sleepOn } from "../clock.js";

/** How long the files must stay unchanged, and how long to wait for that at most. */
export interface SettleTimes {
  readonly settleMs: number;
  readonly maxWaitMs: number;
}

/**
 * A reload's wait for config.yaml and .env: an editor that writes in place, or a copy still under way, leaves
 * a file cut short for a moment, and a cut that still parses (a mapping that ends after its first route) would
 * be applied as the whole file. 200 ms unchanged is far longer than any editor's save and short enough for
 * `svc mcp reload`, which waits for the reload's report.
 */
export const RELOAD_SETTLE: SettleTimes = { settleMs: 200, maxWaitMs: 2000 };

export type Settled = { readonly settled: true } | { readonly settled: false; readonly changing: string[] };

/** A file's bytes, or its error's code (an absent file is a state too: one being replaced). */
function snapshot(path: string): Buffer | string {
  try {
    return readFileSync(path);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? "unreadable";
  }
}

function same(a: Buffer | string, b: Buffer | string): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return a.equals(b);
}

/**
 * Resolves once two reads of every file `settleMs` apart find the same bytes (absent both times counts as the
 * same), so what is read next is a file its writer has finished; `{settled: false, changing}` (the paths
 * still changing) once `maxWaitMs` has passed without that. Timed on `clock`.
 */
export async function settledFiles(
  paths: readonly string[],
  clock: Pick<Clock, "setTimeout" | "clearTimeout">,
  times: SettleTimes = RELOAD_SETTLE,
): Promise<Settled> {
  const sleep = sleepOn(clock);
  let before = paths.map(snapshot);
  let waited = 0;
  for (;;) {
    await sleep(times.settleMs);
    waited += times.settleMs;
    const after = paths.map(snapshot);
    const changing = paths.filter((_, i) => !same(before[i] as Buffer | string, after[i] as Buffer | string));
    if (changing.length === 0) return { settled: true };
    if (waited >= times.maxWaitMs) return { settled: false, changing };
    before = after;
  }
}

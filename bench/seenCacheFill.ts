/**
 * `node --import tsx bench/seenCacheFill.ts`: fills the idempotency cache (`src/streams/seenCache.ts`) with
 * 200,000 unique ids at the gateway's cap of 100,000 and prints, per round, the slowest single
 * `checkAndAdd` and the calls over 1 ms (where the ring grows, and V8 rehashes its Map), against a plain
 * Map filled the same way. What a request waits for behind the cache while it fills.
 */
import { createSeenCache } from "../src/streams/seenCache.js";

const IDS = 200_000;
const MAX_ENTRIES = 100_000;

function timeEach(add: (key: string) => void, prefix: string): { slowestMs: number; over1ms: string[] } {
  let slowestMs = 0;
  const over1ms: string[] = [];
  for (let i = 0; i < IDS; i++) {
    const started = process.hrtime.bigint();
    add(`${prefix}-${i}-delivery`);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (ms > slowestMs) slowestMs = ms;
    if (ms > 1) over1ms.push(`${i}: ${ms.toFixed(1)} ms`);
  }
  return { slowestMs, over1ms };
}

for (let round = 0; round < 3; round++) {
  const cache = createSeenCache({ ttlMs: 3_600_000, maxEntries: MAX_ENTRIES, now: () => 1_000 });
  const seen = timeEach((key) => cache.checkAndAdd(key), `cache-${round}`);
  const map = new Map<string, number>();
  const plain = timeEach((key) => map.set(key, 0), `map-${round}`);
  console.log(
    `round ${round}: cache slowest ${seen.slowestMs.toFixed(1)} ms (over 1 ms at ${seen.over1ms.join(", ") || "none"}); ` +
      `plain Map slowest ${plain.slowestMs.toFixed(1)} ms`,
  );
}

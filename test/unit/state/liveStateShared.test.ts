import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import {
  type JournalRecord,
  LiveState,
  runKey,
  SEEN_MAX,
  SEEN_TTL_MS,
} from "../../../src/state/liveState.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";

const run = (deliveryId: string, receivedAt: number): PendingRun => ({
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId,
  prompt: `PR ${deliveryId}`,
  extra: {},
  receivedAt,
});

const byKey = (records: JournalRecord[]) =>
  records.map((record) => JSON.stringify(record)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe("the journal's live mirror keeping its idempotency keys in the pipeline's cache", () => {
  it("moves the keys replay rebuilt into the cache, where the pipeline finds them duplicates", () => {
    let now = 10_000_000;
    const live = new LiveState();
    live.apply({ t: "s", k: "pr:d1", at: now - 1_000, r: 1 });
    live.apply({ t: "d", k: "pr:d2", at: now - 2_000 });
    live.apply({ t: "s", k: "pr:gone", at: now - SEEN_TTL_MS });
    const cache = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: SEEN_MAX, now: () => now });
    live.shareSeen(cache.journaled, now);
    expect(cache.checkAndAdd("pr:d1")).toBe(true);
    expect(cache.checkAndAdd("pr:d2")).toBe(true);
    expect(cache.checkAndAdd("pr:gone")).toBe(false);
    // Records made afterwards land in the cache too; the snapshot restates the journal's keys only.
    now += 10;
    live.applyOwn({ t: "a", run: run("d3", now), at: now });
    expect(cache.has(runKey("pr", "d3"))).toBe(true);
    expect(byKey([...live.snapshot(now)])).toEqual(
      byKey([
        { t: "s", k: "pr:d1", at: now - 1_010, r: 1 },
        { t: "d", k: "pr:d2", at: now - 2_010 },
        { t: "s", k: runKey("pr", "d3"), at: now, r: 1 },
        { t: "a", run: run("d3", now), at: now },
      ]),
    );
    expect(live.recovered(now).runKeys.sort()).toEqual(["pr:d1", runKey("pr", "d3")].sort());
  });

  it("restates what a mirror with a map of its own restates, whatever records come and whenever", () => {
    const op = fc.record({
      kind: fc.constantFrom("s", "s-run", "d", "a", "a-made", "s-made", "f", "withdraw", "prune"),
      id: fc.constantFrom("1", "2", "3", "4", "5", "6"),
      dt: fc.oneof(fc.nat({ max: 1_000 }), fc.nat({ max: SEEN_TTL_MS / 2 })),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        let now = 50_000_000;
        const own = new LiveState();
        const shared = new LiveState();
        const cache = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: SEEN_MAX, now: () => now });
        const made = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: SEEN_MAX, now: () => now });
        shared.shareSeen(cache.journaled, now, made.journaled);
        for (const { kind, id: sent, dt } of ops) {
          now += dt;
          // The gateway's made ids are none of the senders'.
          const id = kind.endsWith("-made") ? `made-${sent}` : sent;
          const k = runKey("pr", id);
          for (const live of [own, shared]) {
            if (kind === "withdraw") {
              live.withdraw(k);
              live.withdraw(runKey("pr", `made-${sent}`));
            } else if (kind === "prune") live.prune(now);
            else if (kind === "s") live.applyOwn({ t: "s", k, at: now });
            else if (kind === "s-run") live.applyOwn({ t: "s", k, at: now, r: 1 });
            else if (kind === "d") live.applyOwn({ t: "d", k, at: now });
            else if (kind === "a") live.applyOwn({ t: "a", run: run(id, now), at: now });
            else if (kind === "a-made")
              live.applyOwn({ t: "a", run: { ...run(id, now), madeId: true }, at: now });
            else if (kind === "s-made") live.applyOwn({ t: "s", k, at: now, r: 1, m: 1 });
            else live.applyOwn({ t: "f", k });
          }
          if (kind.endsWith("-made")) expect(cache.has(k)).toBe(false);
          expect(byKey([...shared.snapshot(now)])).toEqual(byKey([...own.snapshot(now)]));
        }
        expect(shared.recovered(now).runKeys.sort()).toEqual(own.recovered(now).runKeys.sort());
      }),
      { numRuns: 300 },
    );
  });
});

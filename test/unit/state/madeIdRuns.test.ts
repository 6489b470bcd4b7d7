import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { runKey, SEEN_TTL_MS } from "../../../src/state/liveState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

function freshHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  return home;
}

function storeIn(home: TempHome, now: () => number): LocalStateStore {
  const store = new LocalStateStore({ dir: join(home.dir, "state"), now });
  stores.push(store);
  return store;
}

/** The run of an event whose request named no delivery id (the gateway made `id`). */
const madeRun = (id: string, receivedAt: number) => pendingRun(id, { receivedAt, madeId: true });

/** The pipeline's idempotency cache, at a cap of 3 ids, sharing its entries with `store`'s journal. */
function sharedCache(store: LocalStateStore, now: () => number) {
  const cache = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: 3, now });
  store.recover();
  store.shareSeen(cache.journaled);
  return cache;
}

describe("runs under a delivery id the gateway made, in the local journal", () => {
  it("take no room in the idempotency cache, as accepted or as replayed at a start: a sender's id stays, none is counted forgotten", async () => {
    const home = freshHome();
    const t0 = 1_000_000_000;
    let now = t0;
    const first = storeIn(home, () => now);
    const cache = sharedCache(first, () => now);
    expect(cache.checkAndAdd(runKey("pr", "keep-me-1"))).toBe(false);
    first.runAccepted(pendingRun("keep-me-1", { receivedAt: now }), now);
    const made = Array.from({ length: 10 }, (_, i) => `made-${i}`);
    for (const [i, id] of made.entries()) {
      now += 1;
      first.runAccepted(madeRun(id, now), now);
      if (i % 2 === 0) first.runFinished("pr", id);
    }
    first.groupUpdated({
      id: "g\u00001",
      latest: madeRun("made-g", now),
      merged: 1,
      firstAt: now,
      lastAt: now,
    });
    expect([cache.size(), cache.forgotten()]).toEqual([1, 0]);
    expect(cache.checkAndAdd(runKey("pr", "keep-me-1"))).toBe(true);
    await first.close();

    now += 60_000;
    const second = storeIn(home, () => now);
    const recovered = second.recover();
    expect(recovered.seen).toEqual([[runKey("pr", "keep-me-1"), t0]]);
    // Still known as runs the journal took care of, finished ones too.
    expect(new Set(recovered.runKeys)).toEqual(
      new Set(["keep-me-1", ...made, "made-g"].map((id) => runKey("pr", id))),
    );
    const after = sharedCache(second, () => now);
    expect([after.size(), after.forgotten()]).toEqual([1, 0]);
    expect(after.checkAndAdd(runKey("pr", "keep-me-1"))).toBe(true);
  });

  it("once finished, are not taken again from webhook-pending-runs.json within the hour, past the snapshot each start writes", async () => {
    const home = freshHome();
    let now = 2_000_000_000;
    const first = storeIn(home, () => now);
    sharedCache(first, () => now);
    const done = madeRun("made-done", now);
    const pending = madeRun("made-pending", now);
    first.runAccepted(done, now);
    first.runAccepted(pending, now);
    // A stop saved both as it began; one finished in its drain, and the stop was cut short after.
    const file = join(home.dir, "webhook-pending-runs.json");
    writePendingRuns(file, { runs: [done, pending], unreadable: [] });
    first.runFinished("pr", "made-done");
    await first.close();

    // A start that replays, writes its snapshot and stops again before it took the file in.
    now += 60_000;
    const second = storeIn(home, () => now);
    sharedCache(second, () => now);
    await second.close();

    now += 60_000;
    const third = storeIn(home, () => now);
    const state = new GatewayState(third, () => now, captureLogger().logger);
    await state.importSavedRuns(file, { onPendingUnreadable: () => {}, onPendingEntriesKept: () => {} });
    expect(third.recover().runs).toEqual([pending]);
  });
});

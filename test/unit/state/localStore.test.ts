import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeRecord } from "../../../src/io/state/journal/records.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { SEEN_TTL_MS } from "../../../src/state/liveState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

const run = (id: string, receivedAt = 1000): PendingRun => ({
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId: id,
  prompt: `prompt ${id}`,
  extra: { chat_id: "1" },
  receivedAt,
});

function storeIn(dir: string, now: () => number, maxSegmentBytes?: number): LocalStateStore {
  const store = new LocalStateStore({
    dir,
    now,
    ...(maxSegmentBytes === undefined ? {} : { maxSegmentBytes }),
  });
  stores.push(store);
  return store;
}

function stateDir(): string {
  const home = tempHome();
  homes.push(home);
  return join(home.dir, "state");
}

describe("the local state store across a restart", () => {
  it("gives back the runs accepted and not finished, the pending groups and the idempotency keys", async () => {
    const dir = stateDir();
    let now = 1_000_000;
    const first = storeIn(dir, () => now);
    first.runAccepted(run("a"), now);
    first.runAccepted(run("b"), now);
    first.runAccepted(run("c"), now);
    first.runFinished("pr", "b");
    first.groupUpdated({ id: "g\u00001", latest: run("g1"), merged: 1, firstAt: now, lastAt: now });
    first.groupUpdated({ id: "g\u00001", latest: run("g2"), merged: 2, firstAt: now, lastAt: now + 5 });
    first.groupUpdated({ id: "g\u00002", latest: run("h1"), merged: 1, firstAt: now, lastAt: now });
    first.groupFired("g\u00002");
    first.delivered("direct:d1", now);
    first.remember("cron:c1", now);
    await first.durable();
    // No close: the process died.
    leaveLockAsCrashed(dir);

    now += 60_000;
    const second = storeIn(dir, () => now);
    const recovered = second.recover();
    expect(recovered.runs.map((r) => r.deliveryId)).toEqual(["a", "c"]);
    expect(recovered.runs[0]).toEqual(run("a"));
    expect(recovered.groups).toEqual([
      { id: "g\u00001", latest: run("g2"), merged: 2, firstAt: 1_000_000, lastAt: 1_000_005 },
    ]);
    expect(new Set(recovered.seen.map(([key]) => key))).toEqual(
      new Set(["pr:a", "pr:b", "pr:c", "pr:g1", "pr:g2", "pr:h1", "direct:d1", "cron:c1"]),
    );
  });

  it("a finished run stays finished through any number of restarts; keys older than an hour are dropped", async () => {
    const dir = stateDir();
    let now = 5_000_000;
    const first = storeIn(dir, () => now);
    first.runAccepted(run("a"), now);
    first.runFinished("pr", "a");
    await first.durable();
    leaveLockAsCrashed(dir);
    now += 1000;
    const second = storeIn(dir, () => now);
    expect(second.recover().runs).toEqual([]);
    expect(second.recover().seen).toEqual([["pr:a", 5_000_000]]);
    await second.close();
    now += SEEN_TTL_MS;
    const third = storeIn(dir, () => now);
    expect(third.recover()).toEqual({ runs: [], groups: [], seen: [], runKeys: [] });
  });

  it("stays bounded: rotation keeps only what is live", async () => {
    const dir = stateDir();
    let now = 7_000_000;
    const store = storeIn(dir, () => now, 16 * 1024);
    let written = 0;
    // One round a minute for 200 minutes: idempotency keys expire after an hour, finished runs at once.
    for (let round = 0; round < 200; round++) {
      now += 60_000;
      for (let i = 0; i < 20; i++) {
        store.runAccepted(run(`${round}-${i}`), now);
        written += encodeRecord({ t: "a", run: run(`${round}-${i}`), at: now }).length;
        if (i !== 0) store.runFinished("pr", `${round}-${i}`);
      }
      await store.durable();
    }
    await store.close();
    expect(store.journal.opened.segments).toBe(0);
    expect(store.journal.currentSegment().n).toBeGreaterThan(2);
    const again = storeIn(dir, () => now);
    expect(again.recover().runs.map((r) => r.deliveryId)).toEqual(
      Array.from({ length: 200 }, (_, round) => `${round}-0`),
    );
    // What is left: the live runs and the hour's idempotency keys (a snapshot), and what followed it.
    expect(again.journal.opened.bytes).toBeLessThan(written / 3);
  });
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createShutdownSaver } from "../../../src/actors/pendingRuns.js";
import type { KeptDelivery, QueuedRun } from "../../../src/actors/runs.js";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { LiveState } from "../../../src/state/liveState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

/**
 * docs/durability.md: a run a stop saves while its reply went out keeps that reply and where its delivery
 * stood, in webhook-pending-runs.json and in the journal; a file or record without them (an older svc's)
 * still loads, and one whose kept reply is not readable (a hand edit) loads its run without it.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const queued = (id: string): QueuedRun => ({ ...pendingRun(id), route: {} as QueuedRun["route"] });
const KEPT: KeptDelivery = {
  reply: { text: "the reply" },
  retry: { dueAt: 5000, attempts: 1, partsDelivered: 1, target: "telegram" },
};

describe("a run saved with the reply it was delivering", () => {
  it("is written to webhook-pending-runs.json with its reply and retry, and read back so", () => {
    home = tempHome();
    const file = join(home.dir, "webhook-pending-runs.json");
    const save = createShutdownSaver(readPendingRuns, writePendingRuns, file, (run) =>
      run.deliveryId === "kept" ? KEPT : undefined,
    );
    save([queued("kept"), queued("plain")]);
    const [kept, plain] = readPendingRuns(file).runs;
    expect(kept).toEqual({ ...pendingRun("kept"), ...KEPT });
    expect(plain).toEqual(pendingRun("plain"));
  });

  it("a file without the fields loads as before; a kept reply that is not one is dropped, the run kept", () => {
    home = tempHome();
    const file = join(home.dir, "webhook-pending-runs.json");
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        runs: [
          pendingRun("old"),
          { ...pendingRun("edited"), reply: { text: 7 }, retry: KEPT.retry },
          { ...pendingRun("retry-only"), retry: KEPT.retry },
        ],
      }),
    );
    const { runs, unreadable } = readPendingRuns(file);
    expect(unreadable).toEqual([]);
    expect(runs).toEqual([pendingRun("old"), pendingRun("edited"), pendingRun("retry-only")]);
  });

  it("is journaled again by runKept, replayed with its reply at the next start", async () => {
    home = tempHome();
    const dir = join(home.dir, "state");
    const store = new LocalStateStore({ dir, now: () => 2000 });
    store.recover();
    store.runAccepted(pendingRun("kept"), 1000);
    store.runAccepted(pendingRun("plain"), 1000);
    store.runKept({ ...pendingRun("kept"), ...KEPT });
    // A run no longer live (finished) is not recorded again.
    store.runFinished("pr", "plain");
    store.runKept({ ...pendingRun("plain"), ...KEPT });
    await store.close();

    const again = new LocalStateStore({ dir, now: () => 3000 });
    expect(again.recover().runs).toEqual([{ ...pendingRun("kept"), ...KEPT }]);
    await again.close();
  });

  it("a replayed record whose kept reply is not readable loads its run without it", () => {
    const live = new LiveState();
    expect(live.apply({ t: "a", run: { ...pendingRun("x"), reply: { text: null } }, at: 1000 })).toBe(true);
    expect([...live.runs.values()]).toEqual([pendingRun("x")]);
  });
});

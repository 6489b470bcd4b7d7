import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pipelineLogHooks } from "../../../src/gateway/logHooks.js";
import { storeSavedRuns } from "../../../src/gateway/resumeSavedRuns.js";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { openStateStore } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

const run = (id: string) => pendingRun(id);

const REDIS = { backend: "redis" as const, redis_url: "redis://127.0.0.1:6379/0" };

describe("switching state.backend from local to redis", () => {
  it("says at start what the local journal still owes (redis never reads it), and nothing when it owes nothing", async () => {
    const home = tempHome();
    try {
      const none = captureLogger();
      expect(openStateStore(REDIS, home.dir, none.logger, () => 5000).backend).toBe("memory");
      expect(none.messages()).toEqual([]);

      const local = new LocalStateStore({ dir: join(home.dir, "state"), now: () => 5000 });
      local.runAccepted(run("a"), 1000);
      local.runAccepted(run("b"), 1000);
      local.runFinished("pr", "b");
      local.groupUpdated({ id: "g\u00001", latest: run("g"), merged: 2, firstAt: 1000, lastAt: 2000 });
      await local.close();

      const log = captureLogger();
      expect(openStateStore(REDIS, home.dir, log.logger, () => 5000).backend).toBe("memory");
      expect(log.messages()).toEqual([
        `[state] ${join(home.dir, "state")}: 1 agent run(s) and 1 pending coalescing group(s) were accepted with state.backend: local and have not run; state.backend: redis does not read that journal — run the gateway with backend: local until they have run (a copy of one that a stop saved to webhook-pending-runs.json is left there for it, not run here), then switch back (or, to drop them, delete the directory and the copies a stop saved to webhook-pending-runs.json, which would run here once the journal is gone)`,
      ]);
    } finally {
      home.cleanup();
    }
  });

  it("leaves the runs the journal owes in webhook-pending-runs.json (a local stop saved them there too): they would run twice", async () => {
    const home = tempHome();
    try {
      const local = new LocalStateStore({ dir: join(home.dir, "state"), now: () => 5000 });
      local.runAccepted(run("a"), 1000);
      local.runAccepted(run("b"), 1000);
      await local.close();
      // The stop of that local gateway saved both; an older version saved "c", which no journal holds.
      const file = join(home.dir, "webhook-pending-runs.json");
      writePendingRuns(file, { runs: [run("a"), run("b"), run("c")], unreadable: [] });

      const store = openStateStore(REDIS, home.dir, captureLogger().logger, () => 5000);
      expect(store.owedByLocalJournal).toEqual(new Set(["pr:a", "pr:b"]));
      const queued: string[] = [];
      const log = captureLogger();
      await storeSavedRuns(
        file,
        async (r) => queued.push(r.deliveryId),
        () => ({ profile: "default", route: {} }) as never,
        pipelineLogHooks(log.logger),
        store.owedByLocalJournal,
      );
      expect(queued).toEqual(["c"]);
      expect(readPendingRuns(file).runs.map((r) => r.deliveryId)).toEqual(["a", "b"]);

      // The directory deleted to drop them: nothing owes those copies any more, and they run here.
      await store.close();
      rmSync(join(home.dir, "state"), { recursive: true });
      const after = openStateStore(REDIS, home.dir, captureLogger().logger, () => 5000);
      expect(after.owedByLocalJournal).toBeUndefined();
      await storeSavedRuns(
        file,
        async (r) => queued.push(r.deliveryId),
        () => ({ profile: "default", route: {} }) as never,
        pipelineLogHooks(log.logger),
        after.owedByLocalJournal,
      );
      expect(queued).toEqual(["c", "a", "b"]);
    } finally {
      home.cleanup();
    }
  });

  it("hands a redis start the delivery ids of the hour a local start would restore, the direct deliveries told apart", async () => {
    const home = tempHome();
    try {
      const hour = 60 * 60 * 1000;
      const local = new LocalStateStore({ dir: join(home.dir, "state"), now: () => 5000 });
      local.remember("pr:old", 1000);
      local.runAccepted(run("a"), 2000);
      local.runFinished("pr", "a");
      local.remember("pr:fired", 3000);
      local.delivered("notify:d1", 4000);
      local.remember("pr:ahead", 9000);
      await local.close();

      // Past the first one's hour.
      const store = openStateStore(REDIS, home.dir, captureLogger().logger, () => 1000 + hour + 500);
      expect(store.owedByLocalJournal).toBeUndefined();
      expect(store.seenByLocalJournal).toEqual([
        ["pr:a", 2000, false],
        ["pr:fired", 3000, false],
        ["notify:d1", 4000, true],
        ["pr:ahead", 9000, false],
      ]);
      // The clock set back since: an id ahead of it counts from this start, as a local start counts it.
      expect(openStateStore(REDIS, home.dir, captureLogger().logger, () => 6000).seenByLocalJournal).toEqual([
        ["pr:old", 1000, false],
        ["pr:a", 2000, false],
        ["pr:fired", 3000, false],
        ["notify:d1", 4000, true],
        ["pr:ahead", 6000, false],
      ]);
      // Without a journal (or with nothing of the hour in it): none.
      rmSync(join(home.dir, "state"), { recursive: true });
      expect(
        openStateStore(REDIS, home.dir, captureLogger().logger, () => 5000).seenByLocalJournal,
      ).toBeUndefined();
    } finally {
      home.cleanup();
    }
  });
});

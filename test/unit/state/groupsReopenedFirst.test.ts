import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { type Coalescer, createCoalescer } from "../../../src/actors/coalescer.js";
import type { QueuedRun } from "../../../src/actors/runs.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import { type PendingRun, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState, stateDir } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { Recovered } from "../../../src/state/store.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const ROUTE: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "pr", window_seconds: 30, max_wait_seconds: 300 },
};

const saved: PendingRun = {
  profile: "default",
  routeName: "co",
  event: "push",
  deliveryId: "saved",
  prompt: "p",
  extra: {},
  receivedAt: 1000,
};

describe("a start with the local journal", () => {
  it("reopens the pending coalescing groups before it awaits anything: the listener is open, and a request for their key that comes in while webhook-pending-runs.json is taken in must find its group", async () => {
    const home = tempHome();
    try {
      const recovered: Recovered = {
        runs: [],
        groups: [{ id: "co\u00005", latest: saved, merged: 2, firstAt: 1000, lastAt: 2000 }],
        seen: [],
        runKeys: [],
      };
      const state = new GatewayState(
        { ...memoryStateStore(), recover: () => recovered },
        () => 5000,
        captureLogger().logger,
      );
      const inner = createCoalescer({ dispatch: () => {} });
      const reopened: string[] = [];
      const coalescer: Coalescer = {
        ...inner,
        restore: (group) => {
          reopened.push(group.id);
          inner.restore(group);
        },
      };
      const resuming = state.resume({
        resumeRuns: () => {},
        coalescer,
        lookup: (name) =>
          name === "co" ? { name, route: ROUTE, secret: "s", profile: "default" } : undefined,
        pendingRunsFile: join(home.dir, "webhook-pending-runs.json"),
        onPendingUnreadable: () => {},
        onPendingEntriesKept: () => {},
        onKept: () => {},
      });
      // Before the first await of `resume` settles: what a request in that turn would meet.
      expect(reopened).toEqual(["co\u00005"]);
      await resuming;
      expect(inner.pendingCount()).toBe(1);
      inner.flushAll();
    } finally {
      home.cleanup();
    }
  });

  it("queues the saved runs without awaiting anything once webhook-pending-runs.json was taken in before the listener opened: a request that comes in then queues behind them, so a kept run's delivery takes its chat's turn first", async () => {
    const home = tempHome();
    try {
      const kept: PendingRun = {
        ...saved,
        routeName: "r1",
        deliveryId: "kept",
        reply: { text: "a b c" },
        retry: { dueAt: 20_000, attempts: 1, partsDelivered: 1, target: "telegram" },
      };
      const filed: PendingRun = { ...saved, routeName: "r1", deliveryId: "filed" };
      const file = join(home.dir, "webhook-pending-runs.json");
      writePendingRuns(file, { runs: [filed], unreadable: [] });
      const recovered: Recovered = { runs: [kept], groups: [], seen: [], runKeys: [] };
      const { logger, messages } = captureLogger();
      const state = new GatewayState({ ...memoryStateStore(), recover: () => recovered }, () => 5000, logger);
      const report = { onPendingUnreadable: () => {}, onPendingEntriesKept: () => {} };
      await state.importSavedRuns(file, report);
      const queued: string[] = [];
      const resuming = state.resume({
        resumeRuns: (runs: readonly QueuedRun[]) => {
          for (const run of runs) queued.push(run.deliveryId);
        },
        coalescer: createCoalescer({ dispatch: () => {} }),
        lookup: (name) =>
          name === "r1"
            ? { name, route: { ...ROUTE, coalesce: undefined }, secret: "s", profile: "default" }
            : undefined,
        pendingRunsFile: file,
        ...report,
        onKept: () => {},
      });
      // Before anything `resume` awaits settles: what a request in that turn would queue behind.
      expect(queued).toEqual(["kept", "filed"]);
      await resuming;
      expect(queued).toEqual(["kept", "filed"]);
      expect(messages()).toContain(
        "[state] 2 agent run(s) left unfinished at the last shutdown queued again (from the journal)",
      );
    } finally {
      home.cleanup();
    }
  });

  it("a saved group whose key's group a request opened and fired before the reopening (window_seconds: 0) is superseded by that run: its older event never runs after it, and the journal keeps no group for a later start", async () => {
    const home = tempHome();
    try {
      const ZERO: Route = { ...ROUTE, coalesce: { key: "pr", window_seconds: 0, max_wait_seconds: 300 } };
      const lookup = (name: string) =>
        name === "co" ? { name, route: ZERO, secret: "s", profile: "default" } : undefined;
      const dir = stateDir(home.dir);
      // What a killed gateway left: a group of two events for key 5, 200 s of its max wait left.
      const before = new LocalStateStore({ dir, now: () => 4000 });
      before.groupUpdated({ id: "co\u00005", latest: saved, merged: 2, firstAt: 1000, lastAt: 2000 });
      await before.durable();
      await before.close();
      const store = new LocalStateStore({ dir, now: () => 5000 });
      const state = new GatewayState(store, () => 5000, captureLogger().logger);
      expect(state.recoveredSeen()).toBe(1);
      const clock = new SimulatedClock();
      const dispatched: string[] = [];
      const coalescer = createCoalescer({
        dispatch: (event) => dispatched.push(event.deliveryId),
        clock,
        elapsed: () => clock.now(),
        observer: state.coalesceObserver,
      });
      // A request the listener passed on before the journal's groups were reopened: its group fires at once.
      const request: AcceptedEvent = {
        ...saved,
        deliveryId: "new",
        route: ZERO,
        payload: { pr: 5 },
        headers: {},
        receivedAt: 5000,
        receivedTick: clock.now(),
      };
      expect(coalescer.offer(request)).toBe("coalesced");
      clock.increment(1);
      expect(dispatched).toEqual(["new"]);
      await state.resume({
        resumeRuns: () => {},
        coalescer,
        lookup,
        pendingRunsFile: join(home.dir, "webhook-pending-runs.json"),
        onPendingUnreadable: () => {},
        onPendingEntriesKept: () => {},
        onKept: () => {},
      });
      clock.increment(300_000);
      expect(dispatched).toEqual(["new"]);
      expect(coalescer.pendingCount()).toBe(0);
      await store.durable();
      await store.close();
      // The next start reopens no group, and the saved latest's id is still a duplicate within the hour.
      const after = new LocalStateStore({ dir, now: () => 6000 });
      const recovered = after.recover();
      await after.close();
      expect(recovered.groups).toEqual([]);
      expect(recovered.seen.map(([key]) => key)).toContain(seenKey("co", "saved"));
    } finally {
      home.cleanup();
    }
  });
});

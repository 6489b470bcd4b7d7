import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { Recovered, StoredGroup } from "../../../src/state/store.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const ROUTE: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "pr", window_seconds: 30, max_wait_seconds: 300 },
};

const event = (deliveryId: string, receivedAt: number): PendingRun => ({
  profile: "default",
  routeName: "co",
  event: "push",
  deliveryId,
  prompt: "p",
  extra: {},
  receivedAt,
});

describe("a group saved with times ahead of the clock (the clock set back while the gateway was down)", () => {
  it("is recorded again with its first event at the start, not in the future: a later restart does not give it a whole max wait again", async () => {
    const home = tempHome();
    try {
      const now = 5000;
      const hourAhead = now + 3_600_000;
      const recovered: Recovered = {
        runs: [],
        groups: [
          {
            id: "co\u00005",
            latest: event("saved", hourAhead),
            merged: 2,
            firstAt: hourAhead - 10_000,
            lastAt: hourAhead,
          },
        ],
        seen: [],
        runKeys: [],
      };
      const written: StoredGroup[] = [];
      const state = new GatewayState(
        {
          ...memoryStateStore(),
          recover: () => recovered,
          groupUpdated: (group) => written.push(group),
        },
        () => now,
        captureLogger().logger,
      );
      const coalescer = createCoalescer({ dispatch: () => {}, observer: state.coalesceObserver });
      await state.resume({
        resumeRuns: () => {},
        coalescer,
        lookup: (name) =>
          name === "co" ? { name, route: ROUTE, secret: "s", profile: "default" } : undefined,
        pendingRunsFile: join(home.dir, "webhook-pending-runs.json"),
        onPendingUnreadable: () => {},
        onPendingEntriesKept: () => {},
        onKept: () => {},
      });
      // Recorded again at the start itself (a kill before any further event keeps these times)...
      expect(written.map((group) => [group.firstAt, group.lastAt])).toEqual([[now, now]]);
      // ...and with each event that joins it.
      const next = { ...event("next", now), route: ROUTE, payload: {}, headers: {} };
      state.coalesceObserver.updated("co\u00005", next, 3, next);
      expect(written.map((group) => group.firstAt)).toEqual([now, now]);
      coalescer.flushAll();
    } finally {
      home.cleanup();
    }
  });
});

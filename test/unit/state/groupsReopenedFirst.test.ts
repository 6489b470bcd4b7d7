import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Coalescer, createCoalescer } from "../../../src/actors/coalescer.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { Recovered } from "../../../src/state/store.js";
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
});

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { Recovered, StoredGroup } from "../../../src/state/store.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const ROUTE: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "pr", window_seconds: 30, max_wait_seconds: 300 },
};

const run = (profile: string, deliveryId: string, receivedAt: number): PendingRun => ({
  profile,
  routeName: "co",
  event: "push",
  deliveryId,
  prompt: deliveryId,
  extra: {},
  receivedAt,
});
const accepted = (profile: string, deliveryId: string, at: number): AcceptedEvent => ({
  ...run(profile, deliveryId, at),
  route: ROUTE,
  payload: { pr: 5 },
  headers: {},
});

/**
 * A gateway state whose journal held `groups`, its route `co` bound to `profile` (gone when undefined);
 * what it writes is kept.
 */
async function resumed(groups: StoredGroup[], profile: string | undefined, now: number) {
  const home = tempHome();
  const keptGroups: PendingRun[] = [];
  const updated: StoredGroup[] = [];
  const fired: string[] = [];
  const dispatched: Array<{ id: string; profile: string; superseded: number }> = [];
  const recovered: Recovered = { runs: [], groups, seen: [], runKeys: [] };
  const state = new GatewayState(
    {
      ...memoryStateStore(),
      recover: () => recovered,
      groupUpdated: (group) => updated.push(group),
      groupFired: (id) => fired.push(id),
    },
    () => now,
    captureLogger().logger,
  );
  const coalescer = createCoalescer({
    dispatch: (event, superseded) =>
      dispatched.push({ id: event.deliveryId, profile: event.profile, superseded }),
    observer: state.coalesceObserver,
  });
  try {
    await state.resume({
      resumeRuns: () => {},
      coalescer,
      lookup: (name) =>
        name === "co" && profile !== undefined ? { name, route: ROUTE, secret: "s", profile } : undefined,
      pendingRunsFile: join(home.dir, "webhook-pending-runs.json"),
      onPendingUnreadable: () => {},
      onPendingEntriesKept: () => {},
      onKept: (_runs, groups) => keptGroups.push(...groups),
    });
  } finally {
    home.cleanup();
  }
  return { coalescer, updated, fired, dispatched, keptGroups };
}

describe("the journal id of a local coalescing group names a named profile", () => {
  it("a named profile's group journaled as <route>\\0<key> by an earlier version is recorded as <route>@<profile>\\0<key> when reopened, and the profile's next event for the key joins it", async () => {
    const now = 100_000;
    const { coalescer, updated, fired, dispatched } = await resumed(
      [
        {
          id: "co\u00005",
          latest: run("alpha", "old", now - 1000),
          merged: 1,
          firstAt: now - 1000,
          lastAt: now - 1000,
        },
      ],
      "alpha",
      now,
    );
    expect(updated.map((g) => g.id)).toEqual(["co@alpha\u00005"]);
    expect(fired).toEqual(["co\u00005"]);
    expect(coalescer.offer(accepted("alpha", "new", now))).toBe("coalesced");
    expect(coalescer.pendingCount()).toBe(1);
    expect(updated.at(-1)).toMatchObject({ id: "co@alpha\u00005", merged: 2 });
    coalescer.flushAll();
    expect(dispatched).toEqual([{ id: "new", profile: "alpha", superseded: 1 }]);
    expect(fired.at(-1)).toBe("co@alpha\u00005");
  });

  it("a group left under both ids (a kill between the rename's two writes) is one group: the record under the new id is kept with what is left of its window, the earlier one ended", async () => {
    const now = 100_000;
    const group = {
      latest: run("alpha", "one", now - 1000),
      merged: 1,
      firstAt: now - 1000,
      lastAt: now - 1000,
    };
    const { coalescer, updated, fired, dispatched } = await resumed(
      [
        { id: "co\u00005", ...group },
        { id: "co@alpha\u00005", ...group },
      ],
      "alpha",
      now,
    );
    expect(fired).toEqual(["co\u00005"]);
    expect(updated).toEqual([]);
    expect(coalescer.pendingCount()).toBe(1);
    coalescer.flushAll();
    expect(dispatched).toEqual([{ id: "one", profile: "alpha", superseded: 0 }]);
  });

  it("of a group left under both ids, the newer record is kept (recorded under the new id) whichever id it has", async () => {
    const now = 100_000;
    const { coalescer, updated, fired, dispatched } = await resumed(
      [
        {
          id: "co\u00005",
          latest: run("alpha", "newer", now - 1000),
          merged: 2,
          firstAt: now - 9000,
          lastAt: now - 1000,
        },
        {
          id: "co@alpha\u00005",
          latest: run("alpha", "older", now - 9000),
          merged: 1,
          firstAt: now - 9000,
          lastAt: now - 9000,
        },
      ],
      "alpha",
      now,
    );
    expect(fired).toEqual(["co@alpha\u00005", "co\u00005"]);
    expect(updated).toEqual([expect.objectContaining({ id: "co@alpha\u00005", merged: 2 })]);
    expect(coalescer.pendingCount()).toBe(1);
    coalescer.flushAll();
    expect(dispatched).toEqual([{ id: "newer", profile: "alpha", superseded: 1 }]);
  });

  it("a group left under both ids whose route is gone is held as one group", async () => {
    const now = 100_000;
    const group = {
      latest: run("alpha", "one", now - 1000),
      merged: 1,
      firstAt: now - 1000,
      lastAt: now - 1000,
    };
    const { coalescer, fired, keptGroups } = await resumed(
      [
        { id: "co\u00005", ...group },
        { id: "co@alpha\u00005", ...group },
      ],
      undefined,
      now,
    );
    expect(fired).toEqual(["co\u00005"]);
    expect(keptGroups.map((g) => g.deliveryId)).toEqual(["one"]);
    expect(coalescer.pendingCount()).toBe(0);
  });

  it("the default profile's group keeps <route>\\0<key>: reopened as it was, and joined", async () => {
    const now = 100_000;
    const { coalescer, updated, fired, dispatched } = await resumed(
      [
        {
          id: "co\u00005",
          latest: run("default", "old", now - 1000),
          merged: 1,
          firstAt: now - 1000,
          lastAt: now - 1000,
        },
      ],
      "default",
      now,
    );
    expect(updated).toEqual([]);
    expect(fired).toEqual([]);
    expect(coalescer.offer(accepted("default", "new", now))).toBe("coalesced");
    expect(updated.map((g) => g.id)).toEqual(["co\u00005"]);
    coalescer.flushAll();
    expect(dispatched).toEqual([{ id: "new", profile: "default", superseded: 1 }]);
  });

  it("events of one route and key accepted under two profiles are two groups, each dispatched as its own profile", () => {
    const dispatched: Array<{ id: string; profile: string; superseded: number }> = [];
    const ids: string[] = [];
    const coalescer = createCoalescer({
      dispatch: (event, superseded) =>
        dispatched.push({ id: event.deliveryId, profile: event.profile, superseded }),
      observer: { updated: (id) => ids.push(id), fired: () => {} },
    });
    expect(coalescer.offer(accepted("alpha", "a1", 1))).toBe("coalesced");
    expect(coalescer.offer(accepted("beta", "b1", 2))).toBe("coalesced");
    expect(coalescer.offer(accepted("default", "d1", 3))).toBe("coalesced");
    expect(ids).toEqual(["co@alpha\u00005", "co@beta\u00005", "co\u00005"]);
    coalescer.flushAll();
    expect(dispatched).toEqual([
      { id: "a1", profile: "alpha", superseded: 0 },
      { id: "b1", profile: "beta", superseded: 0 },
      { id: "d1", profile: "default", superseded: 0 },
    ]);
  });
});

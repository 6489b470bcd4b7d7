import { describe, expect, it } from "vitest";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { LiveState, runKey } from "../../../src/state/liveState.js";

const run: PendingRun = {
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId: "d-1",
  prompt: "PR 1",
  extra: {},
  receivedAt: 1_000,
};

describe("journal replay of records it does not understand", () => {
  it("skips and counts them, leaving what the readable records rebuilt untouched", () => {
    const live = new LiveState();
    expect(live.apply({ t: "a", run, at: 1_000 })).toBe(true);
    const unreadable = [
      "not an object",
      null,
      { t: "a", run: { ...run, deliveryId: 7 }, at: 1_000 },
      { t: "f" },
      { t: "s", k: "pr:x" },
      { t: "g", g: { id: "g1" } },
      { t: "x", id: 3 },
      { t: "z", k: "pr:d-1" }, // a record kind from a newer version
    ];
    expect(unreadable.map((record) => live.apply(record))).toEqual(unreadable.map(() => false));
    expect(live.ignored).toBe(unreadable.length);
    expect([...live.runs.keys()]).toEqual([runKey("pr", "d-1")]);
    expect(live.groups.size).toBe(0);
    expect(live.recovered(2_000).seen).toEqual([[runKey("pr", "d-1"), 1_000]]);
  });
});

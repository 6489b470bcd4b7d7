import { describe, expect, it } from "vitest";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import { LiveState, runKey, SEEN_TTL_MS } from "../../../src/state/liveState.js";
import { recordText } from "../../../src/state/recordText.js";

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

describe("idempotency keys across their hour", () => {
  it("a key taken again after its hour expired is replayed with the new time, so a restart still knows it", () => {
    const journaled = [
      { t: "s", k: "pr:d1", at: 0 },
      { t: "s", k: "pr:other", at: 1_800_000 },
      // Past the hour the live mirror had pruned pr:d1; the sender's new delivery took it again.
      { t: "s", k: "pr:d1", at: SEEN_TTL_MS + 60_000 },
    ];
    const replayed = new LiveState();
    for (const record of journaled) replayed.apply(record);
    const now = SEEN_TTL_MS + 120_000;
    expect(replayed.recovered(now).seen).toEqual([
      ["pr:other", 1_800_000],
      ["pr:d1", SEEN_TTL_MS + 60_000],
    ]);
  });

  it("keeps each key's first time to the millisecond and what later records add, at epoch times", () => {
    const t0 = Date.parse("2026-11-29T10:00:00.123Z"); // past 2^32 once packed: no 32-bit arithmetic on it
    const live = new LiveState();
    live.apply({ t: "s", k: "pr:direct", at: t0 });
    live.apply({ t: "d", k: "pr:direct", at: t0 + 5 });
    live.apply({ t: "a", run: { ...run, deliveryId: "d-2" }, at: t0 + 7 });
    live.apply({ t: "s", k: "pr:d-2", at: t0 + 9 });
    live.apply({ t: "s", k: "pr:plain", at: t0 + 11 });
    live.apply({ t: "s", k: "pr:plain", at: t0 + 12, r: 1 });
    live.apply({ t: "d", k: "pr:plain", at: t0 + 13 });
    live.apply({ t: "s", k: "pr:only", at: t0 + 20 });
    expect([...live.snapshot(t0 + 60_000)].filter((record) => record.t !== "a")).toEqual([
      { t: "d", k: "pr:direct", at: t0 },
      { t: "s", k: "pr:d-2", at: t0 + 7, r: 1 },
      { t: "d", k: "pr:plain", at: t0 + 11 },
      { t: "s", k: "pr:only", at: t0 + 20 },
    ]);
    const recovered = live.recovered(t0 + 60_000);
    expect(recovered.seen).toEqual([
      ["pr:direct", t0],
      ["pr:d-2", t0 + 7],
      ["pr:plain", t0 + 11],
      ["pr:only", t0 + 20],
    ]);
    expect(recovered.runKeys).toEqual(["pr:d-2", "pr:plain"]);
  });

  it("within the hour a later record about a key keeps its first time and adds what it says", () => {
    const live = new LiveState();
    live.apply({ t: "s", k: "pr:d1", at: 1_000 });
    live.apply({ t: "d", k: "pr:d1", at: 5_000 });
    expect([...live.snapshot(10_000)]).toEqual([{ t: "d", k: "pr:d1", at: 1_000 }]);
  });
});

describe("a snapshot read over time", () => {
  it("reads each map only as far as it was long when reached: keys added meanwhile cannot keep it going", () => {
    const live = new LiveState();
    for (let i = 0; i < 3; i++) live.apply({ t: "s", k: `old-${i}`, at: 1_000 });
    live.apply({ t: "a", run, at: 1_000 });
    const read: unknown[] = [];
    let added = 0;
    for (const record of live.snapshot(2_000)) {
      read.push(record);
      // Every record read, two new keys and a new run arrive (their own records follow the snapshot).
      live.apply({ t: "s", k: `new-${added++}`, at: 1_500 });
      live.apply({ t: "s", k: `new-${added++}`, at: 1_500 });
      live.apply({ t: "a", run: { ...run, deliveryId: `d-new-${added}` }, at: 1_500 });
      if (read.length > 100) break;
    }
    expect(read).toEqual([
      { t: "s", k: "old-0", at: 1_000 },
      { t: "s", k: "old-1", at: 1_000 },
      { t: "s", k: "old-2", at: 1_000 },
      { t: "s", k: "pr:d-1", at: 1_000, r: 1 },
      // The runs map had grown by then: it is read as far as it was long when the snapshot reached it.
      ...[...live.runs.values()].slice(0, 5).map((r) => ({ t: "a", run: r, at: r.receivedAt })),
    ]);
  });
});

describe("idempotency keys' times in the live mirror", () => {
  it("come back exactly, with their flags, however far from the present they are", () => {
    const now = Date.now();
    const times = [1, now - SEEN_TTL_MS + 1, now, now + 123_456_789_012];
    const live = new LiveState();
    times.forEach((at, i) => {
      live.apply({ t: "s", k: `pr:s${i}`, at, r: 1 });
      live.apply({ t: "d", k: `pr:d${i}`, at });
    });
    const records = [...live.snapshot(0)];
    expect(records).toEqual(
      times.flatMap((at, i) => [
        { t: "s", k: `pr:s${i}`, at, r: 1 },
        { t: "d", k: `pr:d${i}`, at },
      ]),
    );
    expect(live.recovered(0).runKeys).toEqual(times.map((_, i) => `pr:s${i}`));
  });
});

describe("a run's unfilled deliver_extra keys", () => {
  it("come back from its journaled text; a record written without them (an earlier version) replays without them", () => {
    const live = new LiveState();
    const withKeys = { ...run, deliveryId: "d-new", unfilled: ["message_thread_id"] };
    expect(live.apply(JSON.parse(recordText({ t: "a", run: withKeys, at: 1_000 })))).toBe(true);
    expect(
      live.apply(JSON.parse(recordText({ t: "a", run: { ...run, deliveryId: "d-old" }, at: 1_000 }))),
    ).toBe(true);
    expect(live.apply({ t: "a", run: { ...run, deliveryId: "d-odd", unfilled: "chat_id" }, at: 1_000 })).toBe(
      false,
    );
    const runs = live.recovered(2_000).runs;
    expect(runs.find((r) => r.deliveryId === "d-new")?.unfilled).toEqual(["message_thread_id"]);
    expect(runs.find((r) => r.deliveryId === "d-old")).not.toHaveProperty("unfilled");
  });
});

import { describe, expect, it } from "vitest";
import { pendingRunOf } from "../../../src/actors/pendingRuns.js";
import type { QueuedRun } from "../../../src/actors/runs.js";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import type { JournalRecord } from "../../../src/state/liveState.js";
import { recordText } from "../../../src/state/recordText.js";

const run: PendingRun = {
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId: "d-1",
  prompt: 'Review "PR" #1\n\u2028 by ☃ \ud83d\ude00 and a lone \ud800 surrogate',
  extra: { repo: "octo/hello", 'quo"te': "a\\b" },
  receivedAt: 1_764_800_000_123,
};

/** The records of each kind, as the store makes them: the hand-built text must be JSON.stringify's. */
const records: JournalRecord[] = [
  { t: "a", run, at: 1_764_800_000_456 },
  { t: "a", run: pendingRunOf({ ...run, event: undefined } as unknown as QueuedRun), at: 2 },
  { t: "a", run: pendingRunOf({ ...run, cronJob: "nightly" } as unknown as QueuedRun), at: 3 },
  { t: "a", run: { ...run, extra: {}, receivedAt: 0.5 }, at: -0 },
  { t: "a", run: pendingRunOf({ ...run, unfilled: ["chat_id", 'quo"te'] } as unknown as QueuedRun), at: 6 },
  { t: "a", run: pendingRunOf({ ...run, unfilled: [], cronJob: "nightly" } as unknown as QueuedRun), at: 7 },
  { t: "a", run: pendingRunOf({ ...run, madeId: true } as unknown as QueuedRun), at: 8 },
  { t: "a", run: pendingRunOf({ ...run, madeId: true, cronJob: "nightly" } as unknown as QueuedRun), at: 9 },
  { t: "f", k: "pr:d-1" },
  { t: "f", k: 'pr:"odd\u0000id', w: 1 },
  { t: "s", k: "pr:d-1", at: 4 },
  { t: "s", k: "pr:d-1", at: 4, r: 1 },
  { t: "s", k: "pr:d-1", at: 4, r: 1, m: 1 },
  { t: "d", k: "pr:d-1", at: 5 },
  { t: "x", id: "g1" },
];

describe("recordText", () => {
  it.each(records.map((record) => [record.t, record] as const))(
    "a %s record's text is the one JSON.stringify gives",
    (_t, record) => {
      expect(recordText(record)).toBe(JSON.stringify(record));
    },
  );

  it("the run record of pendingRunOf keeps its key order (what the hand-built text writes)", () => {
    const made = pendingRunOf({ ...run, cronJob: "nightly" } as unknown as QueuedRun);
    expect(Object.keys(made)).toEqual([
      "profile",
      "routeName",
      "event",
      "deliveryId",
      "madeId",
      "prompt",
      "extra",
      "unfilled",
      "receivedAt",
      "cronJob",
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { coalescedNote } from "../../../src/cli/webhook/answerNote.js";

const coalesced = { status: 202, text: '{"status":"coalesced"}' };

describe("the note of svc webhook test after a 202 coalesced", () => {
  it("names the window and the cap as the group's timers hold them: longer than a timer holds counts as 2147483 s", () => {
    const note = coalescedNote(
      coalesced,
      "prs",
      {
        coalesce: { key: "pr.number", window_seconds: 3_000_000, max_wait_seconds: 9_000_000 },
      },
      "local",
    );
    expect(note).toContain("when no event of that key came for 2147483 s, at the latest 2147483 s after");
  });

  it("says the configured seconds when a timer holds them", () => {
    const note = coalescedNote(
      coalesced,
      "prs",
      {
        coalesce: { key: "pr.number", window_seconds: 45, max_wait_seconds: 120 },
      },
      "local",
    );
    expect(note).toContain("when no event of that key came for 45 s, at the latest 120 s after");
  });

  it("with state.backend: redis, says the group keeps the windows it was opened with and where its run is seen", () => {
    const note = coalescedNote(
      coalesced,
      "prs",
      { coalesce: { key: "pr.number", window_seconds: 45, max_wait_seconds: 120 } },
      "redis",
    );
    expect(note).toBe(
      "Note: prs coalesces events (coalesce.key pr.number), and a 202 coalesced does not say whether this one is held in its key's group in Redis (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for the windows the group was opened with (in this config.yaml: 45 s, at the latest 120 s after the group's first event), or was superseded by a run its key's group had already dispatched, of an event received after this one (it then never runs) — svc webhook deliveries prs shows which; the group's run is in the delivery history of the instance that runs the group\n",
    );
  });

  it("does not claim the event is held in its key's group: a 202 coalesced is also the answer to one a run already dispatched superseded, which never runs", () => {
    const note = coalescedNote(
      coalesced,
      "r",
      { coalesce: { key: "id", window_seconds: 3, max_wait_seconds: 300 } },
      "local",
    );
    expect(note).toBe(
      "Note: r coalesces events (coalesce.key id), and a 202 coalesced does not say whether this one is held in its key's group (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for 3 s, at the latest 300 s after the group's first event, or was superseded by a run its key's group had already dispatched, of an event received after this one (it then never runs) — svc webhook deliveries r shows which, and the group's run\n",
    );
  });
});

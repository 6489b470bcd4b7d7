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
      "Note: prs coalesces events (coalesce.key pr.number): this one is held in its key's group in Redis (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for the windows the group was opened with (in this config.yaml: 45 s, at the latest 120 s after the group's first event) — the run is in the delivery history of the instance that runs the group (svc webhook deliveries prs there)\n",
    );
  });
});

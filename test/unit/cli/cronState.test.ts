import { describe, expect, it } from "vitest";
import { withState } from "../../../src/cli/cron.js";
import type { CronJob } from "../../../src/io/stores/cronStore.js";

const NOW = Date.parse("2026-11-22T12:00:00.000Z");
const job: CronJob = {
  id: "a1b2c3d4",
  name: "digest",
  schedule: "every 1d",
  prompt: "Summarize the day",
  deliver: "log",
  deliver_extra: {},
  state: "enabled",
  next_run: "2026-11-23T09:00:00.000Z",
};

describe("svc cron pause|resume|disable: the job's state and next run", () => {
  it("resume of a job that is enabled already keeps its next run (an every 1d job keeps its time of day)", () => {
    expect(withState(job, "enabled", NOW)).toEqual({ job, changed: false });
  });

  it("resume of a paused or disabled job schedules it from now", () => {
    const { next_run: _, ...paused } = { ...job, state: "paused" as const };
    expect(withState(paused, "enabled", NOW)).toEqual({
      job: { ...job, next_run: "2026-11-23T12:00:00.000Z" },
      changed: true,
    });
    expect(withState({ ...paused, state: "disabled" }, "enabled", NOW).job.next_run).toBe(
      "2026-11-23T12:00:00.000Z",
    );
  });

  it("an enabled job without a usable next run (edited by hand) gets one from now", () => {
    const { next_run: _, ...bare } = job;
    expect(withState(bare, "enabled", NOW).job.next_run).toBe("2026-11-23T12:00:00.000Z");
    expect(withState({ ...job, next_run: "soon" }, "enabled", NOW).job.next_run).toBe(
      "2026-11-23T12:00:00.000Z",
    );
  });

  it("pause and disable drop the next run; the same state again is no change", () => {
    const { next_run: _, ...rest } = job;
    expect(withState(job, "paused", NOW)).toEqual({ job: { ...rest, state: "paused" }, changed: true });
    expect(withState({ ...rest, state: "paused" }, "paused", NOW).changed).toBe(false);
    expect(withState(job, "disabled", NOW).job).toEqual({ ...rest, state: "disabled" });
  });
});

import { describe, expect, it } from "vitest";
import { notRunAgainLine, orphanRunsLine } from "../../../src/gateway/orphanRunsLine.js";

const HEAD = "[state] stopped 2 agent process group(s) left running by a gateway that was killed";
const QUEUE =
  "run again from the shared queue in Redis, on some instance (this one included), once their lock expires (within about a minute, at most a minute and a half)";

describe("the start's line for agents a killed gateway left running", () => {
  it("local, left by the gateway that held the journal: their runs run again (from the journal)", () => {
    expect(orphanRunsLine(2, "local", 2, "/h/state")).toBe(`${HEAD}; their runs run again`);
  });

  it("local, left by a gateway that did not hold the journal (one on redis): not run by this start, they are Redis's", () => {
    const notHere =
      "not run by this start: they are in the shared queue in Redis, which state.backend: local does not read — a gateway on state.backend: redis runs them once their lock expires (start one on redis to let them run)";
    expect(orphanRunsLine(2, "local", 0, "/h/state")).toBe(
      `${HEAD} with state.backend: redis; their runs are ${notHere}`,
    );
    expect(orphanRunsLine(2, "local", 1, "/h/state")).toBe(
      `${HEAD}; 1 of their runs run again from the journal; the other 1, accepted with state.backend: redis, are ${notHere}`,
    );
  });

  it("redis, the killed gateway a redis one: their runs run again from the shared queue once their lock expires", () => {
    expect(orphanRunsLine(2, "redis", 0, "/h/state")).toBe(`${HEAD}; their runs ${QUEUE}`);
  });

  it("redis, some left by a gateway with the local journal: those are not run by this start, the others are the queue's", () => {
    expect(orphanRunsLine(2, "redis", 1, "/h/state")).toBe(
      `${HEAD}; 1 of their runs, accepted with state.backend: local, are not run by this start: state.backend: redis does not read the local journal in /h/state that holds them — they run when the gateway runs with state.backend: local again (start it once on local to let them run, then switch back); the other 1 ${QUEUE}`,
    );
  });
});

/**
 * A cron run's note is labelled `cron:<job>`; a job named before today's name rule, or edited by hand
 * (`nightly build`, `.hidden`), was said to be "noted by another svc version", as a label of a kind this
 * version does not know is.
 */
describe("the start's line for a stopped process group whose run is not run again", () => {
  const cronLine = (job: string, where = "") =>
    `[cron] ${job}${where}: stopped the agent of its run left running by a process that was killed; that run is not run again — the job runs at its next scheduled time — unless the gateway ran it on its schedule: then its occurrence is caught up once, as the line about that run says`;

  it("names a cron: label as a cron job's run, its name within today's rule or not", () => {
    expect(notRunAgainLine("cron:nightly", undefined)).toBe(cronLine("nightly"));
    for (const job of ["nightly build", ".hidden", "a".repeat(65), "über"])
      expect(notRunAgainLine(`cron:${job}`, undefined)).toBe(cronLine(job));
    expect(notRunAgainLine("cron:nightly build", "work")).toBe(cronLine("nightly build", " in profile work"));
  });

  it("keeps a bare job name of an older note a cron run, and a label of another kind another version's", () => {
    expect(notRunAgainLine("nightly", undefined)).toBe(cronLine("nightly"));
    expect(notRunAgainLine("sandbox:job42", undefined)).toBe(
      "[state] stopped a process group noted by another svc version (sandbox:job42) left running by a process that was killed: this version cannot tell what it ran or whether it runs again",
    );
  });
});

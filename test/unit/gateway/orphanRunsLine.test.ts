import { describe, expect, it } from "vitest";
import { orphanRunsLine } from "../../../src/gateway/orphanRunsLine.js";

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

import { describe, expect, it } from "vitest";
import { createActor, fromCallback, SimulatedClock } from "xstate";
import {
  type CoalesceGroupOutput,
  coalesceGroupMachine,
  renderCoalesceKey,
} from "../../../src/machines/coalesceGroup.js";

function startGroup(item: unknown, quietWindowMs = 30_000, maxWaitMs = 300_000) {
  const clock = new SimulatedClock();
  const actor = createActor(coalesceGroupMachine, { clock, input: { item, quietWindowMs, maxWaitMs } });
  const outputs: CoalesceGroupOutput[] = [];
  actor.subscribe({ complete: () => outputs.push(actor.getSnapshot().output as CoalesceGroupOutput) });
  actor.start();
  return { clock, actor, outputs };
}

describe("coalesceGroup machine (spec 3.1, simulated clock)", () => {
  it("none → pending on the first event; nothing is dispatched before the quiet window", () => {
    const { clock, actor, outputs } = startGroup("e1");
    expect(actor.getSnapshot().value).toEqual({ pending: "quiet" });
    clock.increment(29_999);
    expect(outputs).toEqual([]);
    expect(actor.getSnapshot().status).toBe("active");
  });

  it("quiet window elapses → dispatched once with the single event and superseded 0", () => {
    const { clock, actor, outputs } = startGroup("e1");
    clock.increment(30_000);
    expect(outputs).toEqual([{ item: "e1", superseded: 0, reason: "quiet_window" }]);
    expect(actor.getSnapshot().status).toBe("done");
    clock.increment(600_000);
    expect(outputs).toHaveLength(1);
  });

  it("same key → the new event replaces the pending one and the quiet timer restarts", () => {
    const { clock, actor, outputs } = startGroup("e1");
    clock.increment(20_000);
    actor.send({ type: "offer", item: "e2" });
    clock.increment(20_000); // 40 s after the first event, 20 s after the second: still quiet
    expect(outputs).toEqual([]);
    actor.send({ type: "offer", item: "e3" });
    clock.increment(29_999);
    expect(outputs).toEqual([]);
    clock.increment(1);
    expect(outputs).toEqual([{ item: "e3", superseded: 2, reason: "quiet_window" }]);
  });

  it("max wait is counted from the first event and does not restart on new events", () => {
    const { clock, actor, outputs } = startGroup("e0", 30_000, 100_000);
    for (let i = 1; i <= 9; i++) {
      clock.increment(10_000);
      actor.send({ type: "offer", item: `e${i}` });
    }
    // 90 s: the quiet window never elapsed; max wait fires at 100 s exactly.
    clock.increment(9_999);
    expect(outputs).toEqual([]);
    clock.increment(1);
    expect(outputs).toEqual([{ item: "e9", superseded: 9, reason: "max_wait" }]);
  });

  it("flush (adapter stop or reload) → dispatched immediately with the latest event", () => {
    const { clock, actor, outputs } = startGroup("e1");
    actor.send({ type: "offer", item: "e2" });
    actor.send({ type: "flush" });
    expect(outputs).toEqual([{ item: "e2", superseded: 1, reason: "flush" }]);
    clock.increment(600_000);
    actor.send({ type: "flush" });
    expect(outputs).toHaveLength(1);
  });

  it("an offer after dispatch is ignored (the group is final)", () => {
    const { clock, actor, outputs } = startGroup("e1");
    clock.increment(30_000);
    actor.send({ type: "offer", item: "late" });
    expect(outputs).toEqual([{ item: "e1", superseded: 0, reason: "quiet_window" }]);
  });

  it("timers come from the system clock, so a group spawned under a parent uses the parent's clock", () => {
    const clock = new SimulatedClock();
    const parent = createActor(
      fromCallback(() => {}),
      { clock },
    ).start();
    const actor = createActor(coalesceGroupMachine, {
      parent,
      input: { item: "x", quietWindowMs: 1000, maxWaitMs: 5000 },
    });
    const done: unknown[] = [];
    actor.subscribe({ complete: () => done.push(actor.getSnapshot().output) });
    actor.start();
    clock.increment(1000);
    expect(done).toEqual([{ item: "x", superseded: 0, reason: "quiet_window" }]);
  });
});

describe("renderCoalesceKey", () => {
  const payload = {
    number: 7,
    pull_request: { number: 42, head: { sha: "abc" } },
    repository: { full_name: "o/r" },
    empty: "",
    nil: null,
    labels: ["a", "b"],
  };

  it("a bare dotted path resolves to the value as text", () => {
    expect(renderCoalesceKey("pull_request.number", payload)).toBe("42");
    expect(renderCoalesceKey("pull_request.head.sha", payload)).toBe("abc");
  });

  it("a template renders every placeholder", () => {
    expect(renderCoalesceKey("{repository.full_name}#{number}", payload)).toBe("o/r#7");
  });

  it("objects and lists render as compact JSON", () => {
    expect(renderCoalesceKey("labels", payload)).toBe('["a","b"]');
  });

  it("a missing path, null or empty value does not resolve", () => {
    expect(renderCoalesceKey("pull_request.missing", payload)).toBeUndefined();
    expect(renderCoalesceKey("nil", payload)).toBeUndefined();
    expect(renderCoalesceKey("empty", payload)).toBeUndefined();
  });

  it("a template with any unresolved placeholder does not resolve", () => {
    expect(renderCoalesceKey("{repository.full_name}#{issue.number}", payload)).toBeUndefined();
  });

  it("prototype keys never resolve", () => {
    expect(renderCoalesceKey("constructor", payload)).toBeUndefined();
    expect(renderCoalesceKey("{__proto__}", payload)).toBeUndefined();
  });
});

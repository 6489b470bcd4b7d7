import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { scopedSignal } from "../../src/clock.js";

/** A task that runs until `release` is called, handing out its signal. */
function heldTask() {
  let release: () => void = () => {};
  let signal: AbortSignal | undefined;
  const task = (scoped: AbortSignal) =>
    new Promise<void>((resolve) => {
      signal = scoped;
      release = resolve;
    });
  return { task, release: () => release(), signal: () => signal as AbortSignal };
}

describe("scopedSignal: a task's own signal, following outer signals only while the task runs", () => {
  it("many tasks at once on one outer signal put one listener on it (more than ten printed Node's MaxListenersExceededWarning), and its abort reaches each", async () => {
    const outer = new AbortController();
    const tasks = Array.from({ length: 25 }, heldTask);
    const runs = tasks.map((t) => scopedSignal([outer.signal], t.task));
    expect(getEventListeners(outer.signal, "abort")).toHaveLength(1);
    outer.abort(new Error("stopping"));
    for (const t of tasks) {
      expect(t.signal().aborted).toBe(true);
      expect((t.signal().reason as Error).message).toBe("stopping");
    }
    for (const t of tasks) t.release();
    await Promise.all(runs);
  });

  it("a settled task's signal no longer follows: the listener goes with the last task, and a later abort reaches only those still running", async () => {
    const outer = new AbortController();
    const done = heldTask();
    const running = heldTask();
    const first = scopedSignal([outer.signal], done.task);
    const second = scopedSignal([outer.signal], running.task);
    done.release();
    await first;
    expect(getEventListeners(outer.signal, "abort")).toHaveLength(1);
    outer.abort();
    expect(done.signal().aborted).toBe(false);
    expect(running.signal().aborted).toBe(true);
    running.release();
    await second;

    const quiet = new AbortController();
    const only = heldTask();
    const run = scopedSignal([quiet.signal], only.task);
    only.release();
    await run;
    expect(getEventListeners(quiet.signal, "abort")).toHaveLength(0);
  });

  it("follows each of several outer signals, and one already aborted aborts the task's signal at once", async () => {
    const a = new AbortController();
    const b = new AbortController();
    const t = heldTask();
    const run = scopedSignal([a.signal, b.signal], t.task);
    b.abort("b went");
    expect(t.signal().reason).toBe("b went");
    t.release();
    await run;
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
    const gone = await scopedSignal([b.signal], async (signal) => signal.reason);
    expect(gone).toBe("b went");
  });
});

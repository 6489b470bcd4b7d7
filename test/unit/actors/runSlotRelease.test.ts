import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import {
  drainRuns,
  enqueueRun,
  type QueuedRun,
  RUNS_PER_SIGNAL,
  type RunExecutor,
  RunQueue,
  runsMachine,
  unfinishedRuns,
} from "../../../src/actors/runs.js";
import { silentLogger } from "../../../src/io/log.js";
import { runEvent } from "../../helpers/runEvent.js";

/**
 * A run whose delivery waits to retry hands its slot back (`RunSlot.release`): the slot takes the next run
 * while that one goes on, still unfinished for the drain and the stop (docs/delivery-targets.md, "Retries").
 */

/** A run that hands its slot back, then waits until `finish` is called or its signal is aborted. */
function releasingRun() {
  let finish = () => {};
  let signal: AbortSignal | undefined;
  const execute: RunExecutor = (run, given, slot) => {
    signal = given;
    slot?.release(run);
    // A second release (the delivery's next retry) after the slot moved on is a no-op.
    slot?.release(run);
    return new Promise<void>((resolve, reject) => {
      finish = resolve;
      given.addEventListener("abort", () => reject(given.reason), { once: true });
    });
  };
  return { execute, finish: () => finish(), signal: () => signal };
}

describe("a run handing its slot back", () => {
  it("the one slot takes the next runs while it goes on; the drain waits for it", async () => {
    const held = releasingRun();
    const ran: string[] = [];
    const execute: RunExecutor = async (run, signal, slot) => {
      if (run.deliveryId === "held") return held.execute(run, signal, slot);
      ran.push(run.deliveryId);
    };
    const actor = createActor(runsMachine, {
      input: { maxConcurrent: 1, logger: silentLogger(), execute },
    }).start();
    const { queue } = actor.getSnapshot().context;
    for (const id of ["held", "a", "b"]) enqueueRun(actor, runEvent(id));
    await expect.poll(() => ran).toEqual(["a", "b"]);
    expect(queue.toJSON()).toEqual({ waiting: 0, active: 0, retrying: 1 });
    expect(unfinishedRuns(actor).map((r) => r.deliveryId)).toEqual(["held"]);
    expect(await drainRuns(actor, 50)).toBe(false);
    held.finish();
    expect(await drainRuns(actor, 10_000)).toBe(true);
    expect(queue.toJSON()).toEqual({ waiting: 0, active: 0, retrying: 0 });
    actor.stop();
  });

  it("a stop aborts it, though its slot has since given its later runs another signal", async () => {
    const held = releasingRun();
    let count = 0;
    const execute: RunExecutor = async (run, signal, slot) => {
      if (run.deliveryId === "held") return held.execute(run, signal, slot);
      count += 1;
    };
    const actor = createActor(runsMachine, {
      input: { maxConcurrent: 1, logger: silentLogger(), execute },
    }).start();
    const { queue } = actor.getSnapshot().context;
    enqueueRun(actor, runEvent("held"));
    const later = RUNS_PER_SIGNAL + 5;
    for (let i = 0; i < later; i++) enqueueRun(actor, runEvent(`d-${i}`));
    await expect.poll(() => count, { timeout: 5000 }).toBe(later);
    expect(held.signal()?.aborted).toBe(false);
    const stopped: QueuedRun[] = queue.stopActive();
    expect(stopped.map((r) => r.deliveryId)).toEqual(["held"]);
    expect(held.signal()?.aborted).toBe(true);
    expect(await drainRuns(actor, 10_000)).toBe(true);
    actor.stop();
  });

  it("at the cap the run keeps its slot, and the cap is said once", async () => {
    const said: number[] = [];
    const queue = new RunQueue(undefined, { retryingCap: 1, onRetryingCap: (cap) => said.push(cap) });
    const first = releasingRun();
    const second = releasingRun();
    const ran: string[] = [];
    const execute: RunExecutor = async (run, signal, slot) => {
      if (run.deliveryId === "h1") return first.execute(run, signal, slot);
      if (run.deliveryId === "h2") return second.execute(run, signal, slot);
      ran.push(run.deliveryId);
    };
    const actor = createActor(runsMachine, {
      input: { maxConcurrent: 1, logger: silentLogger(), execute, queue },
    }).start();
    for (const id of ["h1", "h2", "a"]) enqueueRun(actor, runEvent(id));
    await expect.poll(() => queue.toJSON()).toEqual({ waiting: 1, active: 1, retrying: 1 });
    expect(ran).toEqual([]);
    expect(said).toEqual([1]);
    second.finish();
    await expect.poll(() => ran).toEqual(["a"]);
    first.finish();
    expect(await drainRuns(actor, 10_000)).toBe(true);
    expect(said).toEqual([1]);
    actor.stop();
  });
});

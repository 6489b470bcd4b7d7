import { describe, expect, it } from "vitest";
import { type QueuedRun, RunQueue } from "../../../src/actors/runs.js";
import { runEvent } from "../../helpers/runEvent.js";

const run = (id: string) => runEvent(id) as unknown as QueuedRun;
const idle = () => {};

describe("the run queue's waiting list", () => {
  it("hands out a run without shifting an array, however many wait (V8 copies a long array's whole store per shift)", () => {
    const queue = new RunQueue();
    for (let i = 0; i < 40_000; i += 1) queue.push(run(`r${i}`));
    // Shifts of a long array, counted while the queue hands out three runs.
    const shift = Array.prototype.shift;
    let longShifts = 0;
    Array.prototype.shift = function (this: unknown[]) {
      if (this.length > 1000) longShifts += 1;
      return shift.call(this);
    };
    const taken: string[] = [];
    try {
      for (let i = 0; i < 3; i += 1) taken.push(queue.take(idle)?.deliveryId ?? "none");
    } finally {
      Array.prototype.shift = shift;
    }
    expect(longShifts).toBe(0);
    expect(taken).toEqual(["r0", "r1", "r2"]);
    expect(queue.toJSON()).toEqual({ waiting: 39_997, active: 3, retrying: 0 });
  });

  it("keeps first-in first-out order through pushes, takes, withdrawals and the shutdown's taking of the rest", () => {
    const queue = new RunQueue();
    const model: QueuedRun[] = [];
    let seed = 11;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    let next = 0;
    for (let step = 0; step < 6_000; step += 1) {
      const roll = random();
      if (roll < 0.5) {
        const added = run(`r${next++}`);
        queue.push(added);
        model.push(added);
      } else if (roll < 0.97) {
        const taken = queue.take(idle);
        expect(taken).toBe(model.shift());
        if (taken !== undefined) queue.finish(taken);
      } else if (model.length > 0) {
        // A 503 after all withdraws its run wherever it waits.
        const withdrawn = model.splice(Math.floor(random() * model.length), 1)[0] as QueuedRun;
        expect(queue.withdraw(withdrawn)).toBe(true);
        expect(queue.withdraw(withdrawn)).toBe(false);
      }
      if (step % 100 === 0) expect(queue.waiting.length).toBe(model.length);
    }
    expect([...queue.waiting]).toEqual(model);
    expect(queue.takeWaiting()).toEqual(model);
    expect(queue.waiting.length).toBe(0);
    expect(queue.take(idle)).toBeUndefined();
    const after = run("after");
    queue.push(after);
    expect([...queue.waiting]).toEqual([after]);
  });
});

import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { createCoalescer, retiredRunSteps } from "../../../src/actors/coalescer.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";

const ROUTE: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  script: "slow.sh",
  coalesce: { key: "pull_request.number", window_seconds: 1, max_wait_seconds: 300 },
};

/** A retired event of PR 1 received at `t` (ms on the simulated clock). */
const retired = (id: string, t: number): AcceptedEvent => ({
  routeName: "gh",
  route: ROUTE,
  profile: "default",
  event: "pull_request",
  deliveryId: id,
  payload: { pull_request: { number: 1 } },
  headers: {},
  prompt: "p",
  extra: {},
  receivedAt: t,
  receivedTick: t,
});

const N = 5000;

/** N retired runs of one key in increasing order, each taken by the run queue; `after` runs after each. */
function runAll(after: (event: AcceptedEvent, coalescer: ReturnType<typeof createCoalescer>) => void) {
  const clock = new SimulatedClock();
  const coalescer = createCoalescer({ dispatch: () => {}, clock, elapsed: () => clock.now() });
  // Every event was received before the runs are made (each a run of an event received after the last).
  clock.increment(N + 1);
  const events: AcceptedEvent[] = [];
  const before = retiredRunSteps();
  for (let i = 1; i <= N; i++) {
    const event = retired(`R${i}`, i);
    expect(coalescer.offerRetired(event)).toBe("not_grouped");
    coalescer.retiredQueued(event);
    events.push(event);
    after(event, coalescer);
  }
  return { coalescer, events, steps: () => retiredRunSteps() - before };
}

describe("retired runs of one key", () => {
  it("cost work linear in their number, each dropped once its record is durable", () => {
    const { steps } = runAll((event, coalescer) => coalescer.kept(event));
    // One step to make each run's entry, one to drop it: no walk of the key's other runs.
    expect(steps()).toBe(2 * N);
  });

  it("cost work linear in their number while none is known durable, and withdrawing them all in arrival order too", () => {
    const { coalescer, events, steps } = runAll(() => {});
    expect(steps()).toBe(N);
    for (const event of events) coalescer.withdraw(event);
    expect(steps()).toBe(2 * N);
    // Every run withdrawn: the key remembers none, so an event received before them all runs.
    const older = retired("A", 0);
    expect(coalescer.offerRetired(older)).toBe("not_grouped");
  });

  it("a run kept durable drops its key's older runs: withdrawn afterwards, they give back nothing past it", () => {
    const { coalescer, events, steps } = runAll(() => {});
    const last = events[N - 1];
    if (last === undefined) throw new Error("no events");
    coalescer.kept(last);
    expect(steps()).toBe(2 * N);
    for (const event of events) coalescer.withdraw(event);
    expect(steps()).toBe(2 * N);
    // The newest run is durable: an event received before it is superseded by it.
    expect(coalescer.offerRetired(retired("A", 0))).toEqual({ supersededBy: `R${N}` });
  });
});

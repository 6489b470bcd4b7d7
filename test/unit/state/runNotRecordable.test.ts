import { constants } from "node:buffer";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import type { QueuedRun } from "../../../src/actors/runs.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

const event = (deliveryId: string, prompt: string): AcceptedEvent => ({
  routeName: "pr",
  route: {} as AcceptedEvent["route"],
  profile: "default",
  event: "push",
  deliveryId,
  payload: {},
  headers: {},
  prompt,
  extra: {},
  receivedAt: 1000,
});

/**
 * Each huge event's record is measured or written up to the longest string V8 makes (over 512 MiB of JSON) before
 * it throws: on a slow machine under a full suite's load that takes its time.
 */
const HEAVY_MS = 120_000;

/**
 * 90 Mi U+0001 characters, each escaped to six (`\u0001`) in the record: past the longest string V8 makes, and
 * past the length below which a prompt is taken as recordable unmeasured (a sixth of it). Made once for the file
 * (a string is never changed) and let go after it: 90 MiB instead of the 280 MiB of quotes (escaped to two) that
 * each test built, and a record's text written as far as the limit the same.
 */
let huge: string | undefined;
const hugePrompt = () => {
  huge ??= "\u0001".repeat(90 * 1024 * 1024);
  return huge;
};
afterAll(() => {
  huge = undefined;
});

const COALESCING = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "id", window_seconds: 5, max_wait_seconds: 300 },
} as unknown as AcceptedEvent["route"];

/** An event of key 7 of a coalescing route (window 5 s), received at `tick` on the clock that is never set. */
const coalescing = (deliveryId: string, prompt: string, tick: number): AcceptedEvent => ({
  ...event(deliveryId, prompt),
  route: COALESCING,
  payload: { id: 7 },
  receivedAt: 1000 + tick,
  receivedTick: tick,
});

/**
 * The journal's state, its coalescer on a simulated clock (its observer the state's, its dispatch the
 * state's enqueue) and the run queue it fills; `now` is the state's clock (the journal's times).
 */
function coalescingState(now: () => number = () => 5000) {
  const home = tempHome();
  homes.push(home);
  const store = new LocalStateStore({ dir: join(home.dir, "state"), now });
  stores.push(store);
  const state = new GatewayState(store, now, captureLogger().logger);
  const queue: QueuedRun[] = [];
  const clock = new SimulatedClock();
  clock.increment(100);
  const enqueue = state.enqueue(
    (accepted) => {
      queue.push(accepted);
      return accepted;
    },
    { answered: { withdraw: (run) => queue.splice(queue.indexOf(run), 1).length === 1 } },
  );
  const coalescer = createCoalescer({
    dispatch: (accepted) => void enqueue(accepted),
    clock,
    elapsed: () => clock.now(),
    observer: state.coalesceObserver,
  });
  return { store, state, queue, clock, coalescer };
}

/**
 * Each pending group's event id and its prompt's length: a failed assertion printing a huge prompt would take
 * the test process down.
 */
const pendingOf = (coalescer: { pendingEvents(): AcceptedEvent[] }) =>
  coalescer.pendingEvents().map((pending) => [pending.deliveryId, pending.prompt.length]);

/**
 * A prompt that quotes a large payload field several times (`{a}{a}{a}{a}…` with `max_body_bytes` raised)
 * can make a record longer than any JSON text (V8's longest string): writing it throws, and the request is
 * answered 500. Its run had been queued already, and was in the journal's live state: it ran, and a later
 * snapshot kept it for the next start, though its sender was told the event failed.
 */
describe("a run whose record cannot be written at all", () => {
  it("the huge prompt is one whose JSON is longer than any string", () => {
    expect(hugePrompt().length * "\\u0001".length).toBeGreaterThan(constants.MAX_STRING_LENGTH);
    expect(JSON.stringify(hugePrompt().slice(0, 3))).toBe('"\\u0001\\u0001\\u0001"');
  });

  it(
    "leaves the queue and the live state: a request answered 500 never runs",
    async () => {
      const home = tempHome();
      homes.push(home);
      const now = () => 5000;
      const store = new LocalStateStore({ dir: join(home.dir, "state"), now });
      stores.push(store);
      const state = new GatewayState(store, now, captureLogger().logger);
      const queue: QueuedRun[] = [];
      const accept = state.enqueue(
        (accepted) => {
          queue.push(accepted);
          return accepted;
        },
        { answered: { withdraw: (run) => queue.splice(queue.indexOf(run), 1).length === 1 } },
      );
      expect(() => accept(event("huge", hugePrompt()))).toThrow(RangeError);
      // Ids only: a failed assertion printing the prompt would take the test process down.
      expect(queue.map((run) => run.deliveryId)).toEqual([]);
      expect(store.recover().runs.map((run) => run.deliveryId)).toEqual([]);
      // The journal goes on taking records.
      expect(accept(event("next", "a prompt"))).toBe(true);
      await store.durable();
      expect(queue.map((run) => run.deliveryId)).toEqual(["next"]);
      expect(store.recover().runs.map((run) => run.deliveryId)).toEqual(["next"]);
    },
    HEAVY_MS,
  );

  it(
    "on a coalescing route, never joins its group: the group runs once, with the events answered 202",
    () => {
      const home = tempHome();
      homes.push(home);
      const now = () => 5000;
      const store = new LocalStateStore({ dir: join(home.dir, "state"), now });
      stores.push(store);
      const state = new GatewayState(store, now, captureLogger().logger);
      const joined: string[] = [];
      const modes = state.eventModes({
        coalesce: (accepted) => {
          joined.push(accepted.deliveryId);
          return "coalesced";
        },
      });
      expect(modes.coalesce?.(event("small", "a prompt"))).toBe("coalesced");
      // Joined, it became the group's latest event: its group's record, then its run's, threw (a timer's
      // uncaught exception stopped the gateway), and the 500-answered event was the one that ran.
      expect(() => modes.coalesce?.(event("huge", hugePrompt()))).toThrow(RangeError);
      expect(joined).toEqual(["small"]);
    },
    HEAVY_MS,
  );

  it(
    "a retired event (its route replaced by a reload while it was in the script), newer or older than its key's group's latest event, is refused before it joins: the group runs the event answered 202, once",
    async () => {
      const { store, state, queue, clock, coalescer } = coalescingState();
      const modes = state.eventModes({
        coalesce: (accepted) => coalescer.offer(accepted),
        coalesceRetired: (accepted) => coalescer.offerRetired(accepted),
      });
      expect(modes.coalesce?.(coalescing("small", "a prompt", 50))).toBe("coalesced");
      // Received after "small", it joined the group as its latest event before its group record threw
      // (answered 500); the group's run record then threw from its timer (an uncaught exception stopped the
      // gateway), and the 500-answered event was the one that ran.
      expect(() => modes.coalesceRetired?.(coalescing("huge", hugePrompt(), 70))).toThrow(RangeError);
      // Received before "small", it would join behind it (the group's record names "small" and fits), answered
      // 202 and counted by a group whose run can never record it: eventModes' own check refuses it first.
      expect(() => modes.coalesceRetired?.(coalescing("huge-older", hugePrompt(), 40))).toThrow(RangeError);
      expect(pendingOf(coalescer)).toEqual([["small", "a prompt".length]]);
      expect(store.recover().groups.map((group) => [group.latest.deliveryId, group.merged])).toEqual([
        ["small", 1],
      ]);
      clock.increment(5_000);
      expect(queue.map((run) => [run.deliveryId, run.prompt.length])).toEqual([["small", "a prompt".length]]);
      await store.durable();
      expect(store.recover().runs.map((run) => run.deliveryId)).toEqual(["small"]);
      expect(store.recover().groups).toEqual([]);
    },
    HEAVY_MS,
  );

  it(
    "a coalescing group's record that cannot be written leaves the coalescer as it was: an event joining the group (offered or retired, without eventModes' check) never becomes its latest, and one opening a group opens none",
    async () => {
      let at = 5000;
      const { store, queue, clock, coalescer } = coalescingState(() => at);
      const huge = hugePrompt();
      expect(coalescer.offer(coalescing("small", "a prompt", 50))).toBe("coalesced");
      // Received after "small": each joined the group as its latest event before the group's record threw.
      expect(() => coalescer.offer(coalescing("huge-offered", huge, 60))).toThrow(RangeError);
      expect(() => coalescer.offerRetired(coalescing("huge-retired", huge, 70))).toThrow(RangeError);
      expect(pendingOf(coalescer)).toEqual([["small", "a prompt".length]]);
      expect(store.recover().groups.map((group) => [group.latest.deliveryId, group.merged])).toEqual([
        ["small", 1],
      ]);
      clock.increment(5_000);
      expect(queue.map((run) => [run.deliveryId, run.prompt.length])).toEqual([["small", "a prompt".length]]);
      // A group whose record throws is not opened, nor is its first event the key's next group's.
      at = 6000;
      expect(() => coalescer.offer(coalescing("huge-alone", huge, 5_100))).toThrow(RangeError);
      expect(coalescer.pendingCount()).toBe(0);
      at = 9000;
      clock.increment(1_000);
      expect(coalescer.offer(coalescing("next", "b prompt", 6_100))).toBe("coalesced");
      expect(
        store.recover().groups.map((group) => [group.latest.deliveryId, group.merged, group.firstAt]),
      ).toEqual([["next", 1, 9000]]);
      clock.increment(5_000);
      expect(queue.map((run) => run.deliveryId)).toEqual(["small", "next"]);
      await store.durable();
      expect(store.recover().runs.map((run) => run.deliveryId)).toEqual(["small", "next"]);
      expect(store.recover().groups).toEqual([]);
    },
    HEAVY_MS,
  );
});

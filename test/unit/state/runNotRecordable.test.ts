import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

/** Each test builds a 280 MiB string: on a slow machine under a full suite's load that takes its time. */
const HEAVY_MS = 120_000;

/**
 * A prompt that quotes a large payload field several times (`{a}{a}{a}{a}…` with `max_body_bytes` raised)
 * can make a record longer than any JSON text (V8's longest string): writing it throws, and the request is
 * answered 500. Its run had been queued already, and was in the journal's live state: it ran, and a later
 * snapshot kept it for the next start, though its sender was told the event failed.
 */
describe("a run whose record cannot be written at all", () => {
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
      // 280 Mi quote characters, each escaped to two in the record: past the longest string V8 makes.
      expect(() => accept(event("huge", '"'.repeat(280 * 1024 * 1024)))).toThrow(RangeError);
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
      expect(() => modes.coalesce?.(event("huge", '"'.repeat(280 * 1024 * 1024)))).toThrow(RangeError);
      expect(joined).toEqual(["small"]);
    },
    HEAVY_MS,
  );
});

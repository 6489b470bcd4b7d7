import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import { silentLogger } from "../../../src/io/log.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { groupedEvent, groupedRoute } from "../../helpers/groupedEvent.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

const ROUTE = groupedRoute(30, 300);
const event = (deliveryId: string, receivedAt: number): AcceptedEvent =>
  groupedEvent(ROUTE, deliveryId, receivedAt);

describe("coalesced events in the local journal", () => {
  it("an event that joined its group behind a newer one (a slow script let the newer pass it) is still a duplicate after a crash", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    const now = () => 1_000_000;
    const store = new LocalStateStore({ dir, now });
    stores.push(store);
    const state = new GatewayState(store, now, silentLogger());
    const coalescer = createCoalescer({
      dispatch: () => {},
      clock: new SimulatedClock(),
      observer: state.coalesceObserver,
    });
    // B (received later) opens the group; A (received earlier) joins it: B stays the latest.
    expect(coalescer.offer(event("B", 200))).toBe("coalesced");
    expect(coalescer.offer(event("A", 100))).toBe("coalesced");
    await store.durable();
    // No close: the process died.
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now });
    stores.push(after);
    const recovered = after.recover();
    expect(recovered.groups.map((g) => [g.latest.deliveryId, g.merged])).toEqual([["B", 2]]);
    expect(recovered.seen.map(([key]) => key).sort()).toEqual(["grp:A", "grp:B"]);
  });

  it("an event that came out of its script after the newer one's group fired (superseded by that run, no group of its own) is still a duplicate after a crash", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    const now = () => 1_000_000;
    const store = new LocalStateStore({ dir, now });
    stores.push(store);
    const state = new GatewayState(store, now, silentLogger());
    const clock = new SimulatedClock();
    const coalescer = createCoalescer({
      dispatch: () => {},
      clock,
      elapsed: () => clock.now(),
      observer: state.coalesceObserver,
    });
    const scripted = { ...groupedRoute(1, 300), script: "slow.sh" };
    expect(coalescer.offer(groupedEvent(scripted, "B", 200))).toBe("coalesced");
    clock.increment(1_000);
    expect(coalescer.offer(groupedEvent(scripted, "A", 100))).toEqual({ supersededBy: "B" });
    expect(coalescer.pendingCount()).toBe(0);
    await store.durable();
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now });
    stores.push(after);
    const recovered = after.recover();
    expect(recovered.groups).toEqual([]);
    expect(recovered.seen.map(([key]) => key)).toContain("grp:A");
  });
});

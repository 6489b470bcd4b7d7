import { readdirSync, readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import { silentLogger } from "../../../src/io/log.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { groupedEvent, groupedRoute } from "../../helpers/groupedEvent.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
const stores: LocalStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const home of homes.splice(0)) home.cleanup();
});

/** Byte offsets where each `[u32 length][u32 CRC][body]` record of a segment ends. */
function recordEnds(file: string): number[] {
  const bytes = readFileSync(file);
  const ends: number[] = [];
  for (let at = 0; at + 8 <= bytes.length; ) {
    at += 8 + bytes.readUInt32LE(at);
    ends.push(at);
  }
  return ends;
}

describe("a coalescing group firing in the local journal", () => {
  it("a batch torn after its first record (a power cut before the sync) keeps the group's run owed: its run's record comes before the record that the group fired", async () => {
    const home = tempHome();
    homes.push(home);
    const dir = join(home.dir, "state");
    const now = () => 1_000_000;
    const store = new LocalStateStore({ dir, now });
    stores.push(store);
    const state = new GatewayState(store, now, silentLogger());
    const clock = new SimulatedClock();
    const coalescer = createCoalescer({
      dispatch: state.enqueue(() => ({}) as never),
      clock,
      observer: state.coalesceObserver,
    });
    const route = groupedRoute(30, 300);
    expect(coalescer.offer(groupedEvent(route, "first-of-burst", 100))).toBe("coalesced");
    expect(coalescer.offer(groupedEvent(route, "latest-of-burst", 200))).toBe("coalesced");
    await store.durable();
    clock.increment(30_000);
    await store.durable();
    // The fire appended two records in one batch: a crash image where only the first reached the disk.
    const segment = join(dir, readdirSync(dir).find((name) => name.endsWith(".seg")) as string);
    const ends = recordEnds(segment);
    truncateSync(segment, ends[ends.length - 2]);
    leaveLockAsCrashed(dir);
    const after = new LocalStateStore({ dir, now });
    stores.push(after);
    const recovered = after.recover();
    const owed = [
      ...recovered.runs.map((run) => run.deliveryId),
      ...recovered.groups.map((group) => group.latest.deliveryId),
    ];
    expect(owed).toContain("latest-of-burst");
  });
});

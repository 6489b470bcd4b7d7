import { describe, expect, it } from "vitest";
import { HEAP_SAMPLE_MS, type HeapReading, watchHeap } from "../../../src/io/heapWatch.js";
import { fakeClock } from "../../helpers/gateway.js";

describe("the heap watch", () => {
  it("refuses once a full collection leaves more than 75% of the limit, takes again at 70% or less, reads the heap never per request, and says each change once", () => {
    const clock = fakeClock();
    let used = 50;
    let reads = 0;
    let collected: (() => void) | undefined;
    let observing = false;
    const said: string[] = [];
    const watch = watchHeap({
      timers: clock,
      read: (): HeapReading => {
        reads++;
        return { used, limit: 100 };
      },
      afterFullCollections: (listener) => {
        collected = listener;
        observing = true;
        return () => {
          observing = false;
        };
      },
      onShort: (reading) => said.push(`short ${reading.used}`),
      onRecovered: (reading, refused) => said.push(`recovered ${reading.used} after ${refused}`),
    });
    for (let i = 0; i < 1000; i++) expect(watch.refuse()).toBe(false);
    expect(reads).toBe(0); // never per request

    // Garbage between two collections: the timer's readings never start refusing.
    used = 95;
    clock.advance(HEAP_SAMPLE_MS * 5);
    expect(watch.refuse()).toBe(false);
    used = 75; // what a full collection leaves: at the share, not above it
    collected?.();
    expect(watch.refuse()).toBe(false);
    used = 76;
    collected?.();
    expect([watch.refuse(), watch.refuse(), watch.refuse()]).toEqual([true, true, true]);
    used = 71; // below the refusing share, not yet at the recovered one: still refusing, nothing said
    clock.advance(HEAP_SAMPLE_MS * 5);
    expect(watch.refuse()).toBe(true);
    used = 70; // seen on the timer: an idle heap is not collected
    clock.advance(HEAP_SAMPLE_MS);
    expect(watch.refuse()).toBe(false);
    expect(said).toEqual(["short 76", "recovered 70 after 4"]);

    // Recovery seen by a collection too.
    used = 80;
    collected?.();
    expect(watch.refuse()).toBe(true);
    used = 40;
    collected?.();
    expect(watch.refuse()).toBe(false);
    expect(said).toEqual(["short 76", "recovered 70 after 4", "short 80", "recovered 40 after 1"]);

    watch.stop();
    expect(observing).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { HEAP_SAMPLE_MS, type HeapReading, watchHeap } from "../../../src/io/heapWatch.js";
import { fakeClock } from "../../helpers/gateway.js";

describe("the heap watch", () => {
  it("reads the heap on its timer only, refuses above 75% of the limit, takes again at 70% or less, and says each change once", () => {
    const clock = fakeClock();
    let used = 50;
    let reads = 0;
    const said: string[] = [];
    const watch = watchHeap({
      timers: clock,
      read: (): HeapReading => {
        reads++;
        return { used, limit: 100 };
      },
      onShort: (reading) => said.push(`short ${reading.used}`),
      onRecovered: (reading, refused) => said.push(`recovered ${reading.used} after ${refused}`),
    });
    expect(reads).toBe(1);
    for (let i = 0; i < 1000; i++) expect(watch.refuse()).toBe(false);
    expect(reads).toBe(1); // never per request

    used = 75; // at the share, not above it
    clock.advance(HEAP_SAMPLE_MS);
    expect(watch.refuse()).toBe(false);
    used = 76;
    clock.advance(HEAP_SAMPLE_MS);
    expect([watch.refuse(), watch.refuse(), watch.refuse()]).toEqual([true, true, true]);
    used = 71; // below the refusing share, not yet at the recovered one: still refusing, nothing said
    clock.advance(HEAP_SAMPLE_MS * 5);
    expect(watch.refuse()).toBe(true);
    used = 70;
    clock.advance(HEAP_SAMPLE_MS);
    expect(watch.refuse()).toBe(false);
    expect(said).toEqual(["short 76", "recovered 70 after 4"]);
    expect(reads).toBe(9);

    watch.stop();
    expect(clock.pendingTimers()).toBe(0);
    used = 99;
    clock.advance(HEAP_SAMPLE_MS * 10);
    expect(watch.refuse()).toBe(false);
    expect(reads).toBe(9);
  });
});

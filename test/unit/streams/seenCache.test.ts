import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSeenCache } from "../../../src/streams/seenCache.js";

const HOUR = 60 * 60 * 1000;

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("seen cache (spec 6: delivery IDs remembered for 1 hour)", () => {
  it("reports a repeat within the hour as a duplicate, up to the last millisecond", () => {
    const c = clock();
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 100, now: c.now });
    expect(cache.checkAndAdd("d1")).toBe(false);
    c.advance(HOUR - 1);
    expect(cache.checkAndAdd("d1")).toBe(true);
    expect(cache.has("d1")).toBe(true);
  });

  it("forgets an ID exactly one hour after it was first seen (a duplicate does not extend it)", () => {
    const c = clock();
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 100, now: c.now });
    cache.checkAndAdd("d1");
    c.advance(HOUR / 2);
    expect(cache.checkAndAdd("d1")).toBe(true);
    c.advance(HOUR / 2);
    expect(cache.has("d1")).toBe(false);
    expect(cache.checkAndAdd("d1")).toBe(false);
    c.advance(HOUR - 1);
    expect(cache.checkAndAdd("d1")).toBe(true);
  });

  it("evicts expired entries lazily so size() counts only live IDs", () => {
    const c = clock();
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 100, now: c.now });
    cache.checkAndAdd("a");
    c.advance(10);
    cache.checkAndAdd("b");
    expect(cache.size()).toBe(2);
    c.advance(HOUR - 10);
    expect(cache.size()).toBe(1);
    c.advance(10);
    expect(cache.size()).toBe(0);
  });

  it("drops the oldest entries first when maxEntries is reached", () => {
    const c = clock();
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 3, now: c.now });
    for (const id of ["a", "b", "c", "d"]) {
      cache.checkAndAdd(id);
      c.advance(1);
    }
    expect(cache.size()).toBe(3);
    expect(cache.has("a")).toBe(false);
    expect(["b", "c", "d"].every((id) => cache.has(id))).toBe(true);
    expect(cache.checkAndAdd("a")).toBe(false);
    expect(cache.has("b")).toBe(false);
  });

  it("delete() lets a retry of the same delivery through", () => {
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 10, now: clock().now });
    cache.checkAndAdd("d1");
    cache.delete("d1");
    expect(cache.checkAndAdd("d1")).toBe(false);
  });

  it("never holds more than maxEntries and agrees with a reference model", () => {
    const ops = fc.array(
      fc.record({ key: fc.constantFrom("a", "b", "c", "d", "e"), dt: fc.nat({ max: 40 }) }),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(ops, fc.integer({ min: 1, max: 4 }), (steps, max) => {
        const c = clock(0);
        const ttl = 100;
        const cache = createSeenCache({ ttlMs: ttl, maxEntries: max, now: c.now });
        const model: { key: string; at: number }[] = [];
        for (const { key, dt } of steps) {
          c.advance(dt);
          const t = c.now();
          const live = model.filter((e) => t < e.at + ttl);
          const seen = live.some((e) => e.key === key);
          expect(cache.checkAndAdd(key)).toBe(seen);
          model.length = 0;
          model.push(...live);
          if (!seen) {
            model.push({ key, at: t });
            while (model.length > max) model.shift();
          }
          expect(cache.size()).toBe(model.length);
        }
      }),
    );
  });
});

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

  it("runs the hour on `elapsed`; saves and restores expiries as times on the system clock (`now`)", () => {
    let wall = 1_000_000;
    let ticks = 5;
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 100, now: () => wall, elapsed: () => ticks });
    cache.checkAndAdd("d1");
    wall += 3 * HOUR; // the system clock stepped forward (NTP)
    ticks += 1000;
    expect(cache.checkAndAdd("d1")).toBe(true);
    // Saved as a time on the stepped system clock: what is left of its hour from now.
    expect(cache.entries()).toEqual([["d1", wall + HOUR - 1000]]);
    const next = createSeenCache({ ttlMs: HOUR, maxEntries: 100, now: () => wall, elapsed: () => 0 });
    next.restore(cache.entries());
    expect(next.entries()).toEqual([["d1", wall + HOUR - 1000]]);
    ticks += HOUR - 1000;
    expect(cache.has("d1")).toBe(false);
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

  it("agrees with the reference model when deletes (sender retries after a 503) are mixed in", () => {
    const long = `route:${"x".repeat(300)}`;
    const ops = fc.array(
      fc.record({
        // Keys written in one byte a unit and in two (one whose units' low bytes are another key's), and long ones.
        key: fc.constantFrom(
          "a",
          "b",
          "c",
          "d",
          "\u0161",
          "\u20ac\u0161",
          "é",
          long,
          `${long.slice(0, -1)}y`,
        ),
        dt: fc.nat({ max: 30 }),
        remove: fc.boolean(),
      }),
      { maxLength: 300 },
    );
    fc.assert(
      fc.property(ops, fc.integer({ min: 1, max: 5 }), (steps, max) => {
        const c = clock(0);
        const ttl = 100;
        const cache = createSeenCache({ ttlMs: ttl, maxEntries: max, now: c.now });
        let model: { key: string; at: number }[] = [];
        // Plain checks per step, the first that fails named after it (`expect` per step was most of the time).
        let problem: string | undefined;
        for (const [step, { key, dt, remove }] of steps.entries()) {
          c.advance(dt);
          const t = c.now();
          model = model.filter((e) => t < e.at + ttl);
          if (remove) {
            cache.delete(key);
            model = model.filter((e) => e.key !== key);
          } else {
            const seen = model.some((e) => e.key === key);
            if (cache.checkAndAdd(key) !== seen) problem ??= `step ${step}: ${key} seen should be ${seen}`;
            if (!seen) {
              model.push({ key, at: t });
              while (model.length > max) model.shift();
            }
          }
          const listed = cache
            .entries()
            .map(([k]) => k)
            .join("\n");
          if (
            cache.size() !== model.length ||
            model.some((e) => !cache.has(e.key)) ||
            listed !== model.map((e) => e.key).join("\n")
          )
            problem ??= `step ${step}: holds ${JSON.stringify(listed)} (size ${cache.size()}), not ${JSON.stringify(model.map((e) => e.key))}`;
        }
        expect(problem).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it("lets go of the text of the keys it drops: a long churn keeps its keys' bytes bounded", () => {
    const c = clock(0);
    const cache = createSeenCache({ ttlMs: 3_600_000, maxEntries: 1_000, now: c.now });
    let repeats = 0;
    for (let n = 0; n < 200_000; n++) {
      const key = `github:${n}-${"d".repeat(30)}`;
      if (cache.checkAndAdd(key)) repeats += 1;
      if (n % 7 === 0) cache.delete(key);
    }
    expect(repeats).toBe(0);
    expect(cache.keyBytes()).toBeLessThan(128 * 1024);
    // Expired ones too.
    c.advance(3_600_000);
    expect(cache.size()).toBe(0);
    expect(cache.keyBytes()).toBe(0);
  });

  it("keeps the newest 100 000 ids across many ring wraps and compactions", () => {
    const c = clock(0);
    const cache = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100_000, now: c.now });
    const deleted = new Set<string>();
    let duplicates = 0;
    for (let i = 0; i < 350_000; i++) {
      if (i % 7 === 0) {
        cache.delete(`id-${i - 3}`);
        deleted.add(`id-${i - 3}`);
      }
      if (cache.checkAndAdd(`id-${i}`)) duplicates += 1;
    }
    expect(duplicates).toBe(0);
    // The model: the newest 100 000 ids that were not deleted.
    const kept: string[] = [];
    for (let i = 349_999; i >= 0 && kept.length < 100_001; i--) {
      if (!deleted.has(`id-${i}`)) kept.push(`id-${i}`);
    }
    expect(cache.size()).toBe(100_000);
    expect(cache.has(kept[0] as string)).toBe(true);
    expect(cache.has(kept[99_999] as string)).toBe(true);
    expect(cache.has(kept[100_000] as string)).toBe(false);
    expect(cache.has("id-349990")).toBe(false); // deleted at i = 349993
    expect(cache.checkAndAdd(kept[1] as string)).toBe(true);
  });
});

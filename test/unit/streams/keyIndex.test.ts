import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyIndex } from "../../../src/streams/keyIndex.js";

describe("the key index (open addressing in arrays that are never replaced once grown)", () => {
  it("agrees with a Map over random sets and deletes, across its growth", () => {
    const op = fc.record({
      key: fc.integer({ min: 0, max: 799 }).map((n) => `route:delivery-${n}`),
      remove: fc.boolean(),
      value: fc.nat(),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 2_000, maxLength: 4_000 }), (ops) => {
        const index = new KeyIndex();
        const model = new Map<string, number>();
        for (const { key, remove, value } of ops) {
          if (remove) expect(index.delete(key)).toBe(model.delete(key));
          else {
            index.set(key, value);
            model.set(key, value);
          }
          expect(index.get(key)).toBe(model.get(key));
          expect(index.size).toBe(model.size);
        }
        for (let n = 0; n < 800; n++) {
          const key = `route:delivery-${n}`;
          expect(index.get(key)).toBe(model.get(key));
          expect(index.has(key)).toBe(model.has(key));
        }
      }),
      { numRuns: 20, endOnFailure: true },
    );
  });

  it("keeps every key through a long churn: one added and the oldest removed, as the seen-ids cache does", () => {
    const index = new KeyIndex();
    const live = 5_000;
    for (let n = 0; n < 60_000; n++) {
      index.set(`k${n}`, n);
      if (n >= live) expect(index.delete(`k${n - live}`)).toBe(true);
    }
    expect(index.size).toBe(live);
    for (let n = 60_000 - live; n < 60_000; n++) expect(index.get(`k${n}`)).toBe(n);
    expect(index.has(`k${60_000 - live - 1}`)).toBe(false);
    index.clear();
    expect(index.size).toBe(0);
    expect(index.get("k59999")).toBeUndefined();
  });
});

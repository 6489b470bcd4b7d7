import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyIndex } from "../../../src/streams/keyIndex.js";

/** An index whose owner keeps its keys as strings at the values' places, as `ChurnMap` does. */
function indexOverList(): { index: KeyIndex; set(key: string, value: number): void; keys: string[] } {
  const keys: string[] = [];
  const index = new KeyIndex((value, key) => keys[value] === key);
  return {
    index,
    keys,
    set(key, value) {
      keys[value] = key;
      index.set(key, value);
    },
  };
}

describe("the key index (open addressing in arrays that are never replaced once grown)", () => {
  it("agrees with a Map over random sets and deletes, across its growth", () => {
    const op = fc.record({
      key: fc.integer({ min: 0, max: 799 }).map((n) => `route:delivery-${n}`),
      remove: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 2_000, maxLength: 4_000 }), (ops) => {
        const { index, set } = indexOverList();
        const model = new Map<string, number>();
        let place = 0;
        // Plain checks in the loop, the first that fails named after it (`expect` per step was most of the time).
        let problem: string | undefined;
        for (const [step, { key, remove }] of ops.entries()) {
          if (remove) {
            const deleted = index.delete(key);
            if (deleted !== model.delete(key)) problem ??= `step ${step}: delete(${key}) said ${deleted}`;
          } else {
            // A new place each time, as an owner moving a key would give.
            set(key, place);
            model.set(key, place);
            place += 1;
          }
          if (index.get(key) !== model.get(key))
            problem ??= `step ${step}: get(${key}) is ${index.get(key)}, not ${model.get(key)}`;
          if (index.size !== model.size) problem ??= `step ${step}: size ${index.size}, not ${model.size}`;
        }
        for (let n = 0; n < 800; n++) {
          const key = `route:delivery-${n}`;
          if (index.get(key) !== model.get(key) || index.has(key) !== model.has(key))
            problem ??= `at the end: ${key} is ${index.get(key)} (has: ${index.has(key)}), not ${model.get(key)}`;
        }
        expect(problem).toBeUndefined();
      }),
      { numRuns: 10, endOnFailure: true },
    );
  });

  it("keeps every key through a long churn: one added and the oldest removed, as the seen-ids cache does", () => {
    const { index, set } = indexOverList();
    const live = 5_000;
    const notDeleted: number[] = [];
    for (let n = 0; n < 60_000; n++) {
      set(`k${n}`, n);
      if (n >= live && !index.delete(`k${n - live}`)) notDeleted.push(n - live);
    }
    expect(notDeleted).toEqual([]);
    expect(index.size).toBe(live);
    const lost: number[] = [];
    for (let n = 60_000 - live; n < 60_000; n++) if (index.get(`k${n}`) !== n) lost.push(n);
    expect(lost).toEqual([]);
    expect(index.has(`k${60_000 - live - 1}`)).toBe(false);
    index.clear();
    expect(index.size).toBe(0);
    expect(index.get("k59999")).toBeUndefined();
  });

  it("removes an entry by its hash and value when its owner no longer has the key's text at hand", () => {
    const { index, set } = indexOverList();
    for (let n = 0; n < 3_000; n++) set(`k${n}`, n);
    for (let n = 0; n < 3_000; n += 2) expect(index.removeValue(index.hash(`k${n}`), n)).toBe(true);
    expect(index.removeValue(index.hash("k0"), 0)).toBe(false);
    expect(index.size).toBe(1_500);
    for (let n = 0; n < 3_000; n++) expect(index.get(`k${n}`)).toBe(n % 2 === 0 ? undefined : n);
  });
});

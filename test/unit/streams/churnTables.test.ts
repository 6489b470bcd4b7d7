import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChurnMap, ChurnSet, IdWindow } from "../../../src/streams/churnTables.js";

type Op = { add: boolean; key: number };
const ops = fc.array(fc.record({ add: fc.boolean(), key: fc.integer({ min: 0, max: 40 }) }), {
  maxLength: 600,
});

describe("ChurnSet: a Set of objects, in insertion order", () => {
  it("adds once, finds by identity, removes, and counts what it holds", () => {
    const a = { n: 1 };
    const b = { n: 1 };
    const set = new ChurnSet<{ n: number }>();
    set.add(a).add(a).add(b);
    expect(set.size).toBe(2);
    expect(set.has(a) && set.has(b)).toBe(true);
    expect(set.delete(a)).toBe(true);
    expect(set.delete(a)).toBe(false);
    expect(set.has(a)).toBe(false);
    expect([...set]).toEqual([b]);
    expect([...set][0]).toBe(b);
  });

  it("holds what a Set holds, in the same order, through any adds and removes (its array squeezed on the way)", () => {
    const objects = Array.from({ length: 41 }, (_, n) => ({ n }));
    fc.assert(
      fc.property(ops, (steps: Op[]) => {
        const set = new ChurnSet<{ n: number }>();
        const model = new Set<{ n: number }>();
        for (const { add, key } of steps) {
          const item = objects[key] as { n: number };
          if (add) {
            set.add(item);
            model.add(item);
          } else expect(set.delete(item)).toBe(model.delete(item));
          expect(set.size).toBe(model.size);
        }
        expect([...set]).toEqual([...model]);
        for (const item of objects) expect(set.has(item)).toBe(model.has(item));
      }),
    );
  });

  it("an iteration under way visits once each item held when it began and still held when reached, across a squeeze", () => {
    const items = Array.from({ length: 300 }, (_, n) => ({ n }));
    const set = new ChurnSet<{ n: number }>();
    for (const item of items) set.add(item);
    const added = { n: 1000 };
    const visited: number[] = [];
    for (const item of set) {
      visited.push(item.n);
      // Not reached yet, removed: skipped.
      if (item.n === 0) for (const later of items.slice(1, 101)) set.delete(later);
      // Removing those already visited and ten ahead leaves more holes than items: the array is squeezed.
      if (item.n === 200)
        for (const done of [items[0], ...items.slice(101, 200), ...items.slice(250, 260)])
          set.delete(done as { n: number });
      if (item.n === 220) set.add(added);
      if (item.n === 230) set.delete(items[240] as { n: number });
      // Removed and added again before it is reached: still held then.
      if (item.n === 235) {
        set.delete(items[270] as { n: number });
        set.add(items[270] as { n: number });
      }
    }
    const skipped = new Set([...range(1, 101), 240, ...range(250, 260)]);
    const expected = range(0, 300).filter((n) => !skipped.has(n));
    expect(visited.filter((n) => n !== added.n)).toEqual(expected);
    expect(new Set(visited).size).toBe(visited.length);
    expect([...set].map((item) => item.n).sort((x, y) => x - y)).toEqual([
      ...range(200, 300).filter((n) => n !== 240 && (n < 250 || n >= 260)),
      added.n,
    ]);
  });
});

/** The whole numbers from `from` up to `to` (exclusive). */
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

describe("ChurnMap: a Map of string keys, in insertion order", () => {
  it("gets, sets, keeps a key's place when set again, removes, and counts", () => {
    const map = new ChurnMap<number>();
    map.set("b", 1).set("a", 2).set("b", 3);
    expect(map.size).toBe(2);
    expect(map.get("b")).toBe(3);
    expect([...map]).toEqual([
      ["b", 3],
      ["a", 2],
    ]);
    expect(map.delete("b")).toBe(true);
    expect(map.delete("b")).toBe(false);
    expect(map.get("b")).toBeUndefined();
    expect(map.has("a")).toBe(true);
    expect([...map.keys()]).toEqual(["a"]);
    expect([...map.values()]).toEqual([2]);
  });

  it("takes any string as a key, in the order added: names an object has, and numbers", () => {
    const map = new ChurnMap<string>();
    for (const key of ["z", "__proto__", "constructor", "10", "2", "toString", "hasOwnProperty"])
      map.set(key, key);
    expect([...map.keys()]).toEqual([
      "z",
      "__proto__",
      "constructor",
      "10",
      "2",
      "toString",
      "hasOwnProperty",
    ]);
    expect(map.get("__proto__")).toBe("__proto__");
    expect(map.has("valueOf")).toBe(false);
    expect(map.get("valueOf")).toBeUndefined();
  });

  it("holds what a Map holds, in the same order, through any sets and removes (its arrays squeezed on the way)", () => {
    fc.assert(
      fc.property(ops, (steps: Op[]) => {
        const map = new ChurnMap<number>();
        const model = new Map<string, number>();
        steps.forEach(({ add, key }, at) => {
          const k = `route:${key}`;
          if (add) {
            map.set(k, at);
            model.set(k, at);
          } else expect(map.delete(k)).toBe(model.delete(k));
          expect(map.size).toBe(model.size);
        });
        expect([...map]).toEqual([...model]);
        for (let key = 0; key <= 40; key++) expect(map.get(`route:${key}`)).toBe(model.get(`route:${key}`));
      }),
    );
  });

  it("an iteration under way visits once each entry held when it began and still held when reached, with its value then", () => {
    const map = new ChurnMap<number>();
    for (let n = 0; n < 300; n++) map.set(`k${n}`, n);
    const visited: Array<[string, number]> = [];
    for (const entry of map) {
      visited.push(entry);
      const n = Number(entry[0].slice(1));
      if (n === 0) for (let m = 1; m <= 100; m++) map.delete(`k${m}`);
      if (n === 200) for (const m of [0, ...range(101, 200), ...range(250, 260)]) map.delete(`k${m}`);
      if (n === 220) map.set("new", -1);
      if (n === 230) {
        map.delete("k240");
        map.set("k245", -245);
      }
    }
    const skipped = new Set([...range(1, 101), 240, ...range(250, 260)]);
    const expected = range(0, 300)
      .filter((n) => !skipped.has(n))
      .map((n): [string, number] => [`k${n}`, n === 245 ? -245 : n]);
    expect(visited.filter(([key]) => key !== "new")).toEqual(expected);
    expect(map.size).toBe(100 - 1 - 10 + 1);
    expect(map.get("k245")).toBe(-245);
  });
});

describe("IdWindow: values under ids given in increasing order", () => {
  it("gets, sets, removes and counts; an id not held reads undefined, before the window as after it", () => {
    const window = new IdWindow<string>();
    window.set(5, "five").set(6, "six").set(9, "nine");
    expect(window.size).toBe(3);
    expect([
      window.get(5),
      window.get(6),
      window.get(7),
      window.get(9),
      window.get(4),
      window.get(10),
    ]).toEqual(["five", "six", undefined, "nine", undefined, undefined]);
    expect(window.delete(7)).toBe(false);
    expect(window.delete(5)).toBe(true);
    expect(window.delete(5)).toBe(false);
    expect(window.get(5)).toBeUndefined();
    window.set(6, "SIX");
    expect(window.get(6)).toBe("SIX");
    expect(window.size).toBe(2);
    window.clear();
    expect(window.size).toBe(0);
    expect(window.get(9)).toBeUndefined();
  });

  it("takes an id older than the oldest it holds", () => {
    const window = new IdWindow<number>();
    window.set(100, 100).set(101, 101);
    window.delete(100);
    window.set(99, 99).set(40, 40);
    expect([window.get(40), window.get(99), window.get(100), window.get(101)]).toEqual([
      40,
      99,
      undefined,
      101,
    ]);
    expect(window.size).toBe(3);
  });

  it("holds what a Map holds through ids mostly increasing and removed in any order", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            add: fc.boolean(),
            back: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 40 })),
            gap: fc.integer({ min: 1, max: 3 }),
          }),
          { maxLength: 3000 },
        ),
        (steps) => {
          const window = new IdWindow<number>();
          const model = new Map<number, number>();
          let next = 0;
          steps.forEach(({ add, back, gap }, at) => {
            // Mostly the next id; now and then one given earlier (`back` ids before the newest).
            if (add) {
              const id = back > next ? next : next - back;
              next += gap;
              window.set(id, at);
              model.set(id, at);
            } else {
              const id = next - 1 - back;
              expect(window.delete(id)).toBe(model.delete(id));
            }
            expect(window.size).toBe(model.size);
          });
          for (let id = -2; id <= next; id++) expect(window.get(id)).toBe(model.get(id));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("an id held across thousands given since keeps its value; the slots go once it is removed", () => {
    const window = new IdWindow<number>();
    window.set(0, 0);
    for (let id = 1; id < 5000; id++) {
      window.set(id, id);
      window.delete(id);
    }
    expect(window.get(0)).toBe(0);
    expect(window.size).toBe(1);
    window.delete(0);
    expect(window.size).toBe(0);
    window.set(5000, 5000);
    for (let id = 5001; id < 9000; id++) {
      window.set(id, id);
      window.delete(id - 1);
    }
    expect(window.size).toBe(1);
    expect(window.get(8999)).toBe(8999);
    expect(window.get(8998)).toBeUndefined();
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeySlab, keyBytes, keyCode } from "../../../src/streams/keySlab.js";

interface Held {
  key: string;
  start: number;
  code: number;
}

/**
 * The first key held that does not read back and compare as itself, or that compares as a key one unit longer
 * or changed in its last unit; undefined when none. Plain checks, not `expect`: the property runs it ~30 000 times.
 */
function heldProblem(slab: KeySlab, held: readonly Held[]): string | undefined {
  for (const { key, start, code } of held) {
    const name = JSON.stringify(key);
    if (slab.read(start, code) !== key)
      return `${name} reads back as ${JSON.stringify(slab.read(start, code))}`;
    if (!slab.equals(start, code, key)) return `${name} does not equal itself`;
    if (slab.equals(start, code, `${key}x`)) return `${name} equals itself with one more unit`;
    if (key.length > 0) {
      const last = key.charCodeAt(key.length - 1);
      const other = `${key.slice(0, -1)}${String.fromCharCode(last === 0x41 ? 0x42 : 0x41)}`;
      if (slab.equals(start, code, other)) return `${name} equals ${JSON.stringify(other)}`;
      // The same units a byte wider or narrower: a unit past U+00FF whose low byte is another's.
      const shifted = `${key.slice(0, -1)}${String.fromCharCode((last + 0x100) & 0xffff)}`;
      if (slab.equals(start, code, shifted)) return `${name} equals ${JSON.stringify(shifted)}`;
    }
  }
  return undefined;
}

function expectHeld(slab: KeySlab, held: readonly Held[]): void {
  expect(heldProblem(slab, held)).toBeUndefined();
}

describe("the key slab (keys' text as bytes in one ring, off the heap)", () => {
  const key = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.integer({ min: 0, max: 5_000 }).map((n) => `route:${"d".repeat(n % 300)}-${n}`),
  );
  const op = fc.oneof(
    { weight: 3, arbitrary: key.map((k) => ({ add: k })) },
    { weight: 1, arbitrary: fc.nat(3).map((n) => ({ drop: n })) },
  );

  it("holds what a queue of strings holds, across growth, wrapping and letting go", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 300, maxLength: 1_500 }), (ops) => {
        const slab = new KeySlab();
        let held: Held[] = [];
        for (const [n, step] of ops.entries()) {
          if ("add" in step) {
            const code = keyCode(step.add);
            held.push({ key: step.add, code, start: slab.append(step.add, code) });
          } else {
            held = held.slice(step.drop);
            if (held.length === 0) slab.clear();
            else slab.releaseTo((held[0] as Held).start);
          }
          // Every key every 64th step; else the newest and the oldest.
          if (n % 64 === 0) expectHeld(slab, held);
          else expectHeld(slab, held.length > 1 ? [held[0] as Held, held.at(-1) as Held] : held);
        }
        expectHeld(slab, held);
        // What it holds is what the keys take, and the gaps a key left at the array's end.
        const bytes = held.reduce((sum, h) => sum + keyBytes(h.code), 0);
        expect(slab.used).toBeGreaterThanOrEqual(bytes);
      }),
      { numRuns: 25, endOnFailure: true },
    );
  });

  it("writes a key of units up to U+00FF in a byte each, and one past it in two bytes each", () => {
    expect(keyCode("route:abc\u00ff")).toBe(20);
    expect(keyCode("route:\u0100")).toBe(15);
    expect(keyBytes(keyCode("route:\u0100"))).toBe(14);
    const slab = new KeySlab();
    const wide = "r:\u20ac\ud83d\ude00";
    const start = slab.append(wide, keyCode(wide));
    expect(slab.read(start, keyCode(wide))).toBe(wide);
    expect(slab.used).toBe(2 * wide.length);
  });

  it("takes a key longer than twice its array at once, behind keys it holds", () => {
    const slab = new KeySlab();
    const held: Held[] = [];
    for (const key of ["a".repeat(9_000), "b".repeat(100_000), "c:\u0100".repeat(30_000)]) {
      const code = keyCode(key);
      held.push({ key, code, start: slab.append(key, code) });
    }
    expectHeld(slab, held);
  });

  it("grows while its keys wrap around the array's end: each moves to its offset in the longer one", () => {
    const slab = new KeySlab();
    const held: Held[] = [];
    for (let n = 0; n < 2_000; n++) {
      const key = `github:${n}-${"x".repeat(90)}`;
      const code = keyCode(key);
      held.push({ key, code, start: slab.append(key, code) });
      if (n % 3 === 0 && held.length > 1) {
        held.shift();
        slab.releaseTo((held[0] as Held).start);
      }
    }
    expectHeld(slab, held);
  });

  it("keeps a long churn of keys in a bounded array: what is let go is written over", () => {
    const slab = new KeySlab();
    const held: Held[] = [];
    for (let n = 0; n < 200_000; n++) {
      const key = `github:0f0e${n}-delivery`;
      const code = keyCode(key);
      held.push({ key, code, start: slab.append(key, code) });
      if (held.length > 1_000) {
        held.shift();
        slab.releaseTo((held[0] as Held).start);
      }
    }
    expectHeld(slab, held);
    expect(slab.used).toBeLessThan(64 * 1024);
  });
});

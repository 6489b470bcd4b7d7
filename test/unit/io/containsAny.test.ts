import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { containsAnyOf, occurringOf } from "../../../src/io/containsAny.js";

const alphabet = [...'ab01+/="\\ézé€😀'];
const piece = fc.string({ unit: fc.constantFrom(...alphabet), minLength: 0, maxLength: 40 });
const needle = (minLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength: 90 });

/**
 * Scrubbing checks a text for any of a list's forms in one pass, sampling it every few characters: what it
 * finds must be exactly what a search for each would find, wherever a needle starts and whatever it holds
 * (units past 255 share their low byte with others, surrogate pairs are two units).
 */
describe("containsAnyOf", () => {
  it("finds a needle planted anywhere, and only a needle that is there", () => {
    fc.assert(
      fc.property(
        fc.array(needle(16), { minLength: 1, maxLength: 12 }),
        fc.array(needle(4), { maxLength: 3 }),
        piece,
        piece,
        fc.nat(),
        fc.boolean(),
        (long, short, before, after, pick, planted) => {
          const needles = [...long, ...short];
          const text = planted ? `${before}${long[pick % long.length]}${after}` : `${before}${after}`;
          expect(containsAnyOf(needles)(text)).toBe(needles.some((n) => text.includes(n)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("with many long needles (the sampled search), finds each at every offset of a long text", () => {
    const needles = Array.from({ length: 12 }, (_, i) => `token-${i}-${"x".repeat(i)}-Zq9/Kp2+Wm7=${i}`);
    const has = containsAnyOf(needles);
    const filler = "the quick brown fox jumps over the lazy dog, token-1- and token-2 ".repeat(40);
    expect(has(filler)).toBe(false);
    for (const n of needles)
      for (let at = 0; at < 80; at++) expect(has(`${filler.slice(0, at)}${n}${filler.slice(at)}`)).toBe(true);
    expect(has(needles[3]?.slice(0, -1) ?? "")).toBe(false);
    expect(has("")).toBe(false);
  });

  it("no needles: nothing is found", () => {
    expect(containsAnyOf([])("anything")).toBe(false);
    expect(occurringOf([])("anything")).toEqual([]);
  });

  it("occurringOf names every needle the text holds, each once, in the same sampled pass", () => {
    fc.assert(
      fc.property(
        fc.array(needle(16), { minLength: 1, maxLength: 12 }),
        fc.array(needle(0), { maxLength: 3 }),
        fc.array(fc.tuple(piece, fc.nat()), { maxLength: 4 }),
        (long, short, parts) => {
          const needles = [...long, ...short];
          const text = parts.map(([filler, pick]) => `${filler}${long[pick % long.length]}`).join("");
          const found = occurringOf(needles)(text);
          expect(new Set(found).size).toBe(found.length);
          expect(new Set(found)).toEqual(new Set(needles.filter((n) => text.includes(n))));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

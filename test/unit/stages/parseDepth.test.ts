import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NESTED_TOO_DEEP, scanJsonText } from "../../../src/streams/jsonNumbers/index.js";

const nestsDeeperThan = (text: string, max: number) => (scanJsonText(text, max) & NESTED_TOO_DEEP) !== 0;

/** Array/object nesting depth of a parsed JSON value (a scalar is 0). */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe("scanJsonText NESTED_TOO_DEEP (JSON nesting guard of the parse stage)", () => {
  it("agrees with the depth of the parsed value, whatever the strings hold", () => {
    const text = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é") });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.integer(),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(text, tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 6 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 2000 },
    );
  });

  it("escaped quotes and backslashes do not end a string early", () => {
    const body = JSON.stringify({ s: '\\"[[[[[[', t: "\\\\", u: [[["x"]]] });
    expect(nestsDeeperThan(body, 3)).toBe(true);
    expect(nestsDeeperThan(body, 4)).toBe(false);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sizeOf, splitMessage } from "../../../src/io/targets/split.js";

const textArb = fc.string({ unit: fc.constantFrom("a", "b", " ", "\n", "é", "😀", "漢"), maxLength: 400 });

describe("splitMessage", () => {
  it("keeps a message within the limit whole", () => {
    expect(splitMessage("hello", 4096)).toEqual(["hello"]);
    expect(splitMessage("", 4096)).toEqual([""]);
  });

  it("cuts on line boundaries first", () => {
    expect(splitMessage("aaaa\nbbbb\ncccc", 10)).toEqual(["aaaa\nbbbb\n", "cccc"]);
  });

  it("falls back to word boundaries, then a hard cut", () => {
    expect(splitMessage("one two three", 8)).toEqual(["one two ", "three"]);
    expect(splitMessage("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it("never cuts a surrogate pair in half", () => {
    const parts = splitMessage("😀😀😀", 5);
    expect(parts).toEqual(["😀😀", "😀"]);
  });

  it("keeps emoji sequences and combining marks whole on a hard cut", () => {
    const family = "👨‍👩‍👧‍👦"; // 11 UTF-16 units joined by ZWJ
    expect(splitMessage(family.repeat(3), 12)).toEqual([family, family, family]);
    expect(splitMessage("🇩🇪🇫🇷🇮🇹", 6)).toEqual(["🇩🇪", "🇫🇷", "🇮🇹"]);
    expect(splitMessage("e\u0301".repeat(5), 5)).toEqual(["e\u0301e\u0301", "e\u0301e\u0301", "e\u0301"]);
    expect(splitMessage("👍🏽👍🏽", 10, "utf8")).toEqual(["👍🏽", "👍🏽"]);
    // One cluster longer than the limit is still cut (between code points).
    expect(splitMessage(family, 8)).toEqual([family.slice(0, 8), family.slice(8)]);
  });

  it("keeps flags whole in a run of them that starts before the text shortly ahead of the cut", () => {
    // Which regional indicators pair up depends on the whole run: a cut must leave an even number of
    // them before it, or 🇩🇪 is cut into 🇩 | 🇪 and every flag after it pairs wrongly (🇪🇩...).
    for (const [prefix, unit, limit] of [
      ["a", "chars", 202],
      ["ab", "chars", 203],
      ["a", "utf8", 403],
    ] as const) {
      const text = `${prefix}${"🇩🇪".repeat(150)}`;
      const parts = splitMessage(text, limit, unit);
      expect(parts.join("")).toBe(text);
      expect(parts[0]).toBe(`${prefix}${"🇩🇪".repeat(50)}`);
      for (const part of parts.slice(1)) expect(part).toMatch(/^(?:🇩🇪)+$/u);
    }
  });

  it("keeps a letter with hundreds of combining marks whole when it is shorter than the limit", () => {
    const zalgo = `e${"\u0301".repeat(300)}`;
    expect(splitMessage(`${"a".repeat(50)}${zalgo}b`, 340)).toEqual(["a".repeat(50), `${zalgo}b`]);
    // Longer than the limit, it is still cut.
    expect(splitMessage(zalgo, 100)[0]).toHaveLength(100);
  });

  it("counts UTF-8 bytes for byte-limited platforms", () => {
    const parts = splitMessage("漢漢漢漢", 7, "utf8");
    expect(parts).toEqual(["漢漢", "漢漢"]);
  });

  for (const unit of ["chars", "utf8"] as const) {
    it(`property (${unit}): concatenation preserves content and every part is within the limit`, () => {
      fc.assert(
        fc.property(textArb, fc.integer({ min: 4, max: 60 }), (text, limit) => {
          const parts = splitMessage(text, limit, unit);
          expect(parts.join("")).toBe(text);
          for (const part of parts) expect(sizeOf(part, unit)).toBeLessThanOrEqual(limit);
          if (text.length > 0) for (const part of parts) expect(part.length).toBeGreaterThan(0);
        }),
      );
    });
  }

  it("property: a part that ends before the last never ends mid-line when a newline fits", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom("x", "y"), minLength: 1, maxLength: 5 }), {
          maxLength: 30,
        }),
        (lines) => {
          const text = lines.join("\n");
          const parts = splitMessage(text, 12);
          for (const part of parts.slice(0, -1)) {
            if (part.includes("\n")) expect(part.endsWith("\n")).toBe(true);
          }
        },
      ),
    );
  });
});

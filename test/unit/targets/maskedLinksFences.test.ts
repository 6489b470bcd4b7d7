import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClosingFences, defuseMaskedLinks } from "../../../src/io/targets/maskedLinks.js";

/**
 * Mattermost's fenced blocks end at the first line after the opening one of as many or more of its
 * character and nothing else. Each opening fence read the lines after it for that line: fences one shorter
 * than the one before (none closing another), then many short lines, read those lines once per fence.
 */
const shrinkingFences = (char: "`" | "~") =>
  Array.from({ length: 998 }, (_, k) => char.repeat(1000 - k)).join("\n");
/** Those fences, then 400,000 short lines and a link: 1.3 MB. */
const stalling = (char: "`" | "~", link = "[a](b)") =>
  `${shrinkingFences(char)}\n${"x\n".repeat(400_000)}${link}`;

/** Where the first line after `from` closing `length` `char`s ends, line by line (test-side, independent). */
function closedAt(text: string, from: number, char: "`" | "~", length: number): number {
  let start = text.indexOf("\n", from);
  while (start >= 0) {
    const end = text.indexOf("\n", start + 1);
    const line = text.slice(start + 1, end < 0 ? text.length : end);
    const fence = /^ {0,3}([`~]+)[ \t]*$/.exec(line)?.[1] ?? "";
    if (fence.length >= Math.max(3, length) && fence === char.repeat(fence.length))
      return end < 0 ? text.length : end;
    start = end;
  }
  return -1;
}

describe("mattermost: a fenced block's closing line", () => {
  it("is found in steps that grow with the log of the fence lines: 998 fences, none closed, over 400,000 lines", () => {
    for (const char of ["`", "~"] as const) {
      const text = stalling(char);
      const lines = text.split("\n").length;
      const closers = new ClosingFences(text);
      expect(closers.steps).toBe(lines);
      // Each fence line opens a block, as the lines are read: none is closed.
      for (let at = 0, n = 1000; n >= 3; at += n + 1, n -= 1) expect(closers.after(at + n, char, n)).toBe(-1);
      // Read once per fence, those lines were 400 million steps.
      expect(closers.steps - lines).toBeLessThan(998 * 2 * 3 * Math.log2(998));
    }
  });

  it("is the first line after the opening one of as many or more of its character and nothing else", () => {
    const line = fc.constantFrom(
      "```",
      "````",
      "~~~",
      "~~~~~",
      "   ```",
      "    ```",
      "``` ",
      "```\t",
      "~~~x",
      "```\r",
      "a",
      "",
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.nat(),
        fc.integer({ min: 3, max: 6 }),
        (lines, pick, length) => {
          const text = lines.join("\n");
          const closers = new ClosingFences(text);
          const from = pick % (text.length + 1);
          for (const char of ["`", "~"] as const)
            expect(closers.after(from, char, length)).toBe(closedAt(text, from, char, length));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a text of 998 shrinking fences and 400,000 lines (1.3 MB) is defused as it was, in proportion to its length", () => {
    // None of the fences is closed: no block, the link gets its backslash. Each of these took over 10 s.
    for (const char of ["`", "~"] as const) {
      // Compared so, a failure does not print the text.
      expect(defuseMaskedLinks(stalling(char), "mattermost") === stalling(char, "[a]\\(b)")).toBe(true);
    }
    // The bound is the old cost (over 20 s for the two), not this one's (about 0.3 s alone): a suite on a
    // loaded machine took over 5 s.
  }, 15_000);
});

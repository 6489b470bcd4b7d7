import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageParts, sizeOf, splitMarkdown, splitMessage } from "../../../src/io/targets/split.js";

/** Whether every fenced block a part opens is closed in it (a fence line toggles; test-side, independent). */
function closesItsBlocks(part: string): boolean {
  let open: string | undefined;
  for (const line of part.split("\n")) {
    const run = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (run === null) continue;
    const [, fence = "", info = ""] = run;
    if (open === undefined) {
      if (!(fence.startsWith("`") && info.includes("`"))) open = fence;
    } else if (fence[0] === open[0] && fence.length >= open.length && info.trim() === "") open = undefined;
  }
  return open === undefined;
}

describe("splitMarkdown", () => {
  it("closes a code block at the cut and reopens it with its language", () => {
    const text = "intro\n```py\nline one\nline two\nline three\n```\nend";
    expect(splitMarkdown(text, 28)).toEqual([
      "intro\n```py\nline one\n```",
      "```py\nline two\n```",
      "```py\nline three\n```\nend",
    ]);
  });

  it("takes the block's closing fence along rather than reopening an empty block", () => {
    const text = "```ts\nline one\nline two\n```\nafter";
    expect(splitMarkdown(text, 28)).toEqual(["```ts\nline one\nline two\n```\n", "after"]);
  });

  it("closes and reopens an indented block (in a list item) with its indentation", () => {
    const text = "- item\n  ```sh\n  one\n  two\n  ```";
    expect(splitMarkdown(text, 26)).toEqual(["- item\n  ```sh\n  one\n  ```", "  ```sh\n  two\n  ```"]);
  });

  it("moves an opening fence line that would end a part into the next part", () => {
    expect(splitMarkdown("some words here\n```\ncode code\n```", 20)).toEqual([
      "some words here\n",
      "```\ncode code\n```",
    ]);
  });

  it("keeps longer fences and tildes as they are", () => {
    expect(splitMarkdown("~~~~js\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\n~~~~", 30)).toEqual([
      "~~~~js\na\nb\nc\nd\ne\nf\ng\nh\ni\n~~~~",
      "~~~~js\nj\n~~~~",
    ]);
  });

  it("splits text without fences exactly as splitMessage", () => {
    const text = "aaaa\nbbbb\ncccc dddd eeee";
    expect(splitMarkdown(text, 10)).toEqual(splitMessage(text, 10));
  });

  const markdownArb = fc.string({
    unit: fc.constantFrom("a", " ", "\n", "é", "😀", "\n```\n", "\n```ts\n", "`", "\n~~~\n"),
    maxLength: 120,
  });
  for (const unit of ["chars", "utf8"] as const) {
    it(`property (${unit}): parts fit the limit and close every block the text closes`, () => {
      fc.assert(
        fc.property(markdownArb, fc.integer({ min: 24, max: 80 }), (text, limit) => {
          const parts = splitMarkdown(text, limit, unit);
          for (const part of parts) {
            expect(sizeOf(part, unit)).toBeLessThanOrEqual(limit);
            if (text.length > 0) expect(part.length).toBeGreaterThan(0);
            expect(part).not.toMatch(/[\ud800-\udbff]$/);
          }
          if (closesItsBlocks(text)) for (const part of parts) expect(closesItsBlocks(part)).toBe(true);
          // Nothing is lost: the parts hold every non-fence character of the text, in order.
          const content = (s: string) => s.replace(/[`~\n]/g, "").replaceAll("ts", "");
          expect(content(parts.join(""))).toBe(content(text));
        }),
      );
    });
  }
});

describe("messageParts", () => {
  it("leaves out parts that are only whitespace (platforms refuse an empty message)", () => {
    expect(splitMessage(`${"x".repeat(10)}\n\n`, 10)).toEqual(["xxxxxxxxxx", "\n\n"]);
    expect(messageParts(`${"x".repeat(10)}\n\n`, 10)).toEqual(["xxxxxxxxxx"]);
  });

  it("an empty or all-whitespace text is still one message", () => {
    expect(messageParts("", 10)).toEqual([""]);
    expect(messageParts(" ".repeat(25), 10)).toEqual([" ".repeat(10)]);
  });
});

describe("splitting cost", () => {
  // A per-character size function (Slack counts escaped text) used to be applied to all the rest of the
  // text for every part: a 1.3 MB reply held the event loop for 5 s. Each character is measured a bounded
  // number of times.
  for (const split of [splitMessage, splitMarkdown]) {
    it(`${split.name} measures each character a bounded number of times`, () => {
      const text = `\`\`\`\n${Array.from({ length: 4000 }, (_, i) => `line ${i} & <b> ${"x".repeat(30)}`).join("\n")}\n\`\`\``;
      let measured = 0;
      const unit = (ch: string) => {
        measured += 1;
        return ch === "&" ? 5 : ch.length;
      };
      const parts = split(text, 4000, unit);
      expect(parts.length).toBeGreaterThan(30);
      expect(measured).toBeLessThan(3 * text.length);
    });
  }
});

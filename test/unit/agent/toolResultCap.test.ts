import { describe, expect, it } from "vitest";
import { cutToolContent, cutToolText, headOf } from "../../../src/agent/toolResultCap.js";
import { agentSchema } from "../../../src/config/sections/agent.js";

const note = (chars: number, shown: number) =>
  `[… cut: the tool's result was ${chars} characters; the first ${shown} are shown (agent.max_tool_result_chars)]`;

describe("cutting a tool's text result to agent.max_tool_result_chars", () => {
  it("a text longer than the cap keeps its first max characters and ends with a line saying so", () => {
    expect(cutToolText("x".repeat(300_000), 100_000)).toEqual({
      text: `${"x".repeat(100_000)}\n${note(300_000, 100_000)}`,
      cut: { chars: 300_000, shown: 100_000 },
    });
  });

  it("a text of the cap's length or shorter is unchanged, and 0 means no cap", () => {
    expect(cutToolText("x".repeat(100_000), 100_000)).toEqual({ text: "x".repeat(100_000) });
    expect(cutToolText("short", 100_000)).toEqual({ text: "short" });
    expect(cutToolText("x".repeat(300_000), 0)).toEqual({ text: "x".repeat(300_000) });
  });

  it("a cut that would fall inside a surrogate pair keeps one character fewer: no lone surrogate", () => {
    // "a😀b": the emoji is two UTF-16 units, at indices 1 and 2.
    expect(headOf("a😀b", 2)).toBe("a");
    expect(headOf("a😀b", 3)).toBe("a😀");
    const { text, cut } = cutToolText(`${"x".repeat(9)}😀${"y".repeat(10)}`, 10);
    expect(cut).toEqual({ chars: 21, shown: 9 });
    expect(text).toBe(`${"x".repeat(9)}\n${note(21, 9)}`);
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it("content with several text blocks is held to the cap in all, counting the line break each is joined with; images are kept as they are", () => {
    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    const { content, cut } = cutToolContent(
      [
        { type: "text", text: "a".repeat(6) },
        image,
        { type: "text", text: "b".repeat(6) },
        { type: "text", text: "c" },
      ],
      10,
    );
    // 13 characters and the 2 line breaks between the 3 blocks: the model is sent "aaaaaa\nbbb".
    expect(cut).toEqual({ chars: 15, shown: 10 });
    expect(content).toEqual([
      { type: "text", text: "a".repeat(6) },
      image,
      { type: "text", text: "b".repeat(3) },
      { type: "text", text: note(15, 10) },
    ]);
    const whole = [image, { type: "text" as const, text: "a".repeat(10) }];
    expect(cutToolContent(whole, 10)).toEqual({ content: whole });
    // 200 one-character blocks under a cap of 50: what is sent, joined, is at most 50 (it was 99).
    const many = cutToolContent(
      Array.from({ length: 200 }, () => ({ type: "text" as const, text: "a" })),
      50,
    );
    const sent = many.content
      .slice(0, -1)
      .map((part) => (part.type === "text" ? part.text : ""))
      .join("\n");
    expect(sent.length).toBe(49);
    expect(many.cut).toEqual({ chars: 399, shown: 49 });
  });
});

describe("agent.max_tool_result_chars", () => {
  it("defaults to 100000, takes 0 (no cap) and refuses a negative or fractional value", () => {
    expect(agentSchema.parse({}).max_tool_result_chars).toBe(100_000);
    expect(agentSchema.parse(undefined).max_tool_result_chars).toBe(100_000);
    expect(agentSchema.parse({ max_tool_result_chars: 0 }).max_tool_result_chars).toBe(0);
    for (const value of [-1, 1.5]) {
      const result = agentSchema.safeParse({ max_tool_result_chars: value });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(["max_tool_result_chars"]);
    }
    expect(agentSchema.safeParse({ max_tool_result_chars: -1 }).error?.issues[0]?.message).toBe(
      "negative — write a number of characters such as 100000, or 0 for no cap",
    );
  });
});

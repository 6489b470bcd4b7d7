import { describe, expect, it } from "vitest";
import { normalizedMessagesAnswer } from "../../../src/agent/toolCallInputs.js";

const answer = (content: unknown[]) => ({
  type: "message",
  role: "assistant",
  content,
  stop_reason: "end_turn",
  usage: { input_tokens: 3, output_tokens: 2 },
});

describe("normalizedMessagesAnswer: thinking left in the text", () => {
  it("becomes a thinking block before the answer's text, from a server other than Anthropic's own", () => {
    expect(
      normalizedMessagesAnswer(answer([{ type: "text", text: "<think>plan</think>\n\nAnswer" }])),
    ).toEqual(
      answer([
        { type: "thinking", thinking: "plan", signature: "" },
        { type: "text", text: "Answer" },
      ]),
    );
  });

  it("an empty thinking (Qwen3's <think>\\n\\n</think> when told not to think) leaves the answer's text alone", () => {
    expect(
      normalizedMessagesAnswer(answer([{ type: "text", text: "<think>\n\n</think>\n\nAnswer" }])),
    ).toEqual(answer([{ type: "text", text: "Answer" }]));
  });

  it("is left as written by Anthropic's own API, which would refuse an unsigned thinking block sent back", () => {
    const own = answer([{ type: "text", text: "<think>plan</think>\n\nAnswer" }]);
    expect(normalizedMessagesAnswer(own, { thinkingInText: false })).toBeUndefined();
  });

  it("is left as written when the answer has a thinking block of its own, or the tag is not at the start", () => {
    const signed = { type: "thinking", thinking: "t", signature: "s" };
    expect(
      normalizedMessagesAnswer(answer([signed, { type: "text", text: "<think>x</think>y" }])),
    ).toBeUndefined();
    expect(normalizedMessagesAnswer(answer([{ type: "text", text: "Use <think> tags." }]))).toBeUndefined();
  });
});

describe("normalizedMessagesAnswer: a tool_use without an id", () => {
  it("gets one made up, as the Chat Completions path gives such a call; a call with its own keeps it", () => {
    const normalized = normalizedMessagesAnswer(
      answer([
        { type: "tool_use", name: "echo", input: { text: "a" } },
        { type: "tool_use", id: null, name: "echo", input: { text: "b" } },
        { type: "tool_use", id: "toolu_1", name: "echo", input: { text: "c" } },
      ]),
    ) as { content: Array<{ id: unknown }> };
    const [first, second, third] = normalized.content.map((part) => part.id);
    expect(first).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(second).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(third).toBe("toolu_1");
  });
});

describe("normalizedMessagesAnswer: a tool_use without a name", () => {
  it("is named the empty name, as one with a null name is; a named one keeps its own", () => {
    const normalized = normalizedMessagesAnswer(
      answer([
        { type: "tool_use", id: "toolu_1", input: {} },
        { type: "tool_use", id: "toolu_2", name: null, input: {} },
        { type: "tool_use", id: "toolu_3", name: "echo", input: {} },
      ]),
    ) as { content: Array<{ name: unknown }> };
    expect(normalized.content.map((part) => part.name)).toEqual(["", "", "echo"]);
    expect(
      normalizedMessagesAnswer(answer([{ type: "tool_use", id: "toolu_1", name: "", input: {} }])),
    ).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { normalizedChatAnswer } from "../../../src/agent/chatAnswer.js";

const answer = (message: Record<string, unknown>, finish = "tool_calls") => ({
  id: "x",
  choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason: finish }],
});

describe("normalizedChatAnswer: other servers' tool call shapes read as OpenAI's", () => {
  it("arguments written as a JSON object are sent on as their text", () => {
    const fixed = normalizedChatAnswer(
      answer({ tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: { a: 1 } } }] }),
    );
    expect(fixed).toEqual(
      answer({ tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: '{"a":1}' } }] }),
    );
  });

  it("arguments written as null, or left out, are sent on as the text null and as empty arguments", () => {
    const call = (fn: Record<string, unknown>) => ({
      id: "c1",
      type: "function",
      function: { name: "t", ...fn },
    });
    const fixed = normalizedChatAnswer(answer({ tool_calls: [call({ arguments: null }), call({})] }));
    expect(fixed).toEqual(answer({ tool_calls: [call({ arguments: "null" }), call({ arguments: "" })] }));
  });

  it("the legacy function_call is taken as the one tool call it names", () => {
    const fixed = normalizedChatAnswer(
      answer({ function_call: { name: "t", arguments: '{"a":1}' } }, "function_call"),
    );
    expect(fixed).toEqual(
      answer(
        { tool_calls: [{ type: "function", function: { name: "t", arguments: '{"a":1}' } }] },
        "function_call",
      ),
    );
  });

  it("an answer in OpenAI's shape (text arguments, none, no calls, not an answer) is left as it is", () => {
    expect(
      normalizedChatAnswer(
        answer({ tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] }),
      ),
    ).toBeUndefined();
    expect(normalizedChatAnswer(answer({ content: "hi" }, "stop"))).toBeUndefined();
    expect(normalizedChatAnswer({ error: { message: "x" } })).toBeUndefined();
    expect(normalizedChatAnswer(null)).toBeUndefined();
  });
});

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

  it("a call without a name, or with one that is no text, is named the empty name; a named one keeps its own", () => {
    const call = (fn: Record<string, unknown>) => ({
      id: "c1",
      type: "function",
      function: { arguments: "{}", ...fn },
    });
    const fixed = normalizedChatAnswer(
      answer({ tool_calls: [call({}), call({ name: null }), call({ name: 7 }), call({ name: "t" })] }),
    );
    expect(fixed).toEqual(
      answer({
        tool_calls: [call({ name: "" }), call({ name: "" }), call({ name: "" }), call({ name: "t" })],
      }),
    );
    expect(normalizedChatAnswer(answer({ tool_calls: [call({ name: "" })] }))).toBeUndefined();
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

  it("thinking a server left in the text (<think>…</think>, or up to a closing tag alone) becomes reasoning_content", () => {
    const text = (content: string, more: Record<string, unknown> = {}) =>
      answer({ content, ...more }, "stop");
    expect(normalizedChatAnswer(text("<think>\nplan\n</think>\n\nAnswer <b>"))).toEqual(
      text("Answer <b>", { reasoning_content: "plan" }),
    );
    expect(normalizedChatAnswer(text("plan\n</think>Answer"))).toEqual(
      text("Answer", { reasoning_content: "plan" }),
    );
    // An opening tag never closed is thinking only in a turn cut at its output limit; a finished turn's text
    // is the answer as written.
    const cut = (content: string, more: Record<string, unknown> = {}) =>
      answer({ content, ...more }, "length");
    expect(normalizedChatAnswer(cut("  <think>cut short while thinking"))).toEqual(
      cut("", { reasoning_content: "cut short while thinking" }),
    );
    expect(normalizedChatAnswer(text("  <think> is the tag that opens it."))).toBeUndefined();
    // Thinking alone in a finished turn, closed either way: taken apart, the answer marked as holding only
    // thinking (the run fails); with a tool call (not the reply) it is taken apart unmarked.
    expect(normalizedChatAnswer(text("Close it with:\n</think>"))).toEqual({
      ...text("", { reasoning_content: "Close it with:" }),
      svc_thinking_only: true,
    });
    expect(normalizedChatAnswer(text("<think>\nI will just say hi.\n</think>\n"))).toEqual({
      ...text("", { reasoning_content: "I will just say hi." }),
      svc_thinking_only: true,
    });
    expect(normalizedChatAnswer(cut("plan\n</think>\n"))).toEqual(cut("", { reasoning_content: "plan" }));
    const call = { id: "c1", type: "function", function: { name: "t", arguments: "{}" } };
    expect(normalizedChatAnswer(answer({ content: "plan\n</think>\n", tool_calls: [call] }))).toEqual(
      answer({ content: "", reasoning_content: "plan", tool_calls: [call] }),
    );
    // Only the first closing tag, at the start of a line, with no opening tag before it.
    expect(normalizedChatAnswer(text("Write </think> inline.\n</think>\nAnswer"))).toBeUndefined();
    expect(normalizedChatAnswer(text("plan\n</think>\nUse <think> tags."))).toEqual(
      text("Use <think> tags.", { reasoning_content: "plan" }),
    );
    // Not from OpenAI's own API or Azure OpenAI (thinkingInText: false), which never write it there.
    expect(normalizedChatAnswer(text("<think>x</think>y"), { thinkingInText: false })).toBeUndefined();
    // Text that does not start with thinking is left alone.
    expect(normalizedChatAnswer(text("Use <think> tags.</think>"))).toBeUndefined();
    expect(normalizedChatAnswer(text("Write </think> to close it."))).toBeUndefined();
    // A server that sent the reasoning apart too: a <think> block at the text's start whose </think> ends its line
    // is still thinking, joined after that reasoning (never delivered as the reply); a </think> line alone is taken
    // as written.
    expect(normalizedChatAnswer(text("<think>x</think>\ny", { reasoning_content: "r" }))).toEqual(
      text("y", { reasoning_content: "r\nx" }),
    );
    expect(normalizedChatAnswer(text("<think>x</think>\n\ny", { reasoning: "r" }))).toEqual(
      text("y", { reasoning: "r", reasoning_content: "r\nx" }),
    );
    expect(normalizedChatAnswer(text("<think>x</think>", { reasoning_content: "r" }))).toEqual({
      ...text("", { reasoning_content: "r\nx" }),
      svc_thinking_only: true,
    });
    expect(normalizedChatAnswer(text("plan\n</think>\nAnswer", { reasoning_content: "r" }))).toBeUndefined();
    // Only a block whose </think> ends its line, as a chat template writes it: an answer naming the tags is the answer.
    expect(
      normalizedChatAnswer(text("<think> and </think> are the tags.", { reasoning_content: "r" })),
    ).toBeUndefined();
    expect(normalizedChatAnswer(text("<think>x</think>y", { reasoning_content: "r" }))).toBeUndefined();
    expect(normalizedChatAnswer(text("<think>x</think> \t\n\ny", { reasoning_content: "r" }))).toEqual(
      text("y", { reasoning_content: "r\nx" }),
    );
  });

  it('Mistral\'s finish_reason "model_length" is read as "length", a turn cut short', () => {
    const mistral = (content: string, finish: string) => answer({ content }, finish);
    // The endpoint's own reason is kept with the answer: model_length may be max_tokens or the context window.
    expect(normalizedChatAnswer(mistral("The answer is", "model_length"))).toEqual({
      ...mistral("The answer is", "length"),
      svc_raw_finish_reason: "model_length",
    });
    expect(normalizedChatAnswer(answer({ content: "<think>plan" }, "model_length"))).toEqual({
      ...answer({ content: "", reasoning_content: "plan" }, "length"),
      svc_raw_finish_reason: "model_length",
    });
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

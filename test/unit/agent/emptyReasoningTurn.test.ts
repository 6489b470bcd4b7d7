import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptyReasoningRewrite, languageModel } from "../../../src/agent/provider.js";
import { sdkTools, ToolCallLog } from "../../../src/agent/sdkTools.js";
import { type LoopProgress, runToolLoop } from "../../../src/agent/toolLoop.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * DeepSeek's thinking mode refuses a request whose earlier tool-calling turn comes back without its
 * `reasoning_content`, even a turn whose reasoning was empty, which the AI SDK leaves out.
 */

let deepseek: FakeModel;
beforeEach(async () => {
  deepseek = await startFakeOpenAI();
});
afterEach(() => deepseek.close());

const runs: unknown[] = [];
const upper: AgentTool = {
  name: "upper",
  description: "Upper-cases text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute(args) {
    runs.push(args);
    return {
      ok: true,
      content: [{ type: "text", text: String((args as { text: string }).text).toUpperCase() }],
    };
  },
};

async function loop() {
  const context = toolContext({ route: "r", deliveryId: "d" });
  const log = new ToolCallLog();
  const progress: LoopProgress = { steps: 0, inputTokens: 0, outputTokens: 0 };
  const result = await runToolLoop(
    {
      model: languageModel({ provider: "openai", model: "deepseek-v4-flash", base_url: deepseek.baseUrl }),
      prompt: "go",
      tools: sdkTools([upper], context, log, {
        elapsed: () => 1,
        images: "described",
        safePropertyKeys: false,
        mayRun: () => true,
      }),
      maxSteps: 5,
      maxTokens: 100,
      signal: context.signal,
      log,
    },
    progress,
  );
  return { result, log };
}

/** DeepSeek's answer: a tool call whose reasoning is empty. */
const emptyReasoningCall = {
  status: 200,
  body: JSON.stringify({
    id: "d1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "deepseek-v4-flash",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "",
          reasoning_content: "",
          tool_calls: [
            {
              index: 0,
              id: "call_00_a",
              type: "function",
              function: { name: "upper", arguments: '{"text":"hi"}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }),
};

const refusal = {
  error: {
    message: "The reasoning_content in the thinking mode must be passed back to the API.",
    type: "invalid_request_error",
    param: null,
    code: "invalid_request_error",
  },
};

type Sent = { role: string; reasoning_content?: string; tool_calls?: unknown[] };
const assistant = (request: number) =>
  ((deepseek.requests[request]?.json.messages ?? []) as Sent[]).find((m) => m.role === "assistant");

describe("a tool-calling turn with empty reasoning, sent back to DeepSeek's thinking mode", () => {
  it("is sent again with an empty reasoning_content once the endpoint refuses it without: the tool ran once, the answer is the reply", async () => {
    runs.length = 0;
    deepseek.script(emptyReasoningCall, { status: 400, body: JSON.stringify(refusal) }, { text: "HI it is" });
    const { result, log } = await loop();
    expect(result.text).toBe("HI it is");
    expect(runs).toEqual([{ text: "hi" }]);
    expect(log.calls).toMatchObject([{ name: "upper", ok: true }]);
    expect(assistant(1)).not.toHaveProperty("reasoning_content");
    expect(assistant(2)).toMatchObject({ reasoning_content: "", tool_calls: [{ id: "call_00_a" }] });
  });

  it("the endpoint's later requests carry it at once", async () => {
    deepseek.script(emptyReasoningCall, { status: 400, body: JSON.stringify(refusal) }, { text: "first" });
    await loop();
    deepseek.requests.length = 0;
    deepseek.script(emptyReasoningCall, { text: "second" });
    const { result } = await loop();
    expect(result.text).toBe("second");
    expect(deepseek.requests).toHaveLength(2);
    expect(assistant(1)).toMatchObject({ reasoning_content: "" });
  });

  it("DeepSeek's refusal is told in each wording it writes, apart from Groq's refusal of the field", () => {
    for (const message of [
      refusal.error.message,
      'The "reasoning_content" in the thinking mode must be passed back to the API.',
      "reasoning_content must be passed back when the API responds with reasoning_content.",
      "Missing reasoning_content field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    ])
      expect(emptyReasoningRewrite.refused(400, JSON.stringify({ error: { message } }))).toBe(true);
    const groq =
      "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]";
    expect(emptyReasoningRewrite.refused(400, JSON.stringify({ error: { message: groq } }))).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMPTY_PROMPT } from "../../../src/agent/messagesApiPrompt.js";
import { languageModel } from "../../../src/agent/provider.js";
import { sdkTools, ToolCallLog } from "../../../src/agent/sdkTools.js";
import { type LoopProgress, runToolLoop } from "../../../src/agent/toolLoop.js";
import type { AgentTool, ToolContext } from "../../../src/agent/tools/tool.js";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel } from "../../fakes/openaiServer.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * The Messages API refuses a whole request holding a text block that is empty or only whitespace ("text
 * content blocks must contain non-whitespace text"): a prompt that rendered to nothing, or a turn where the
 * model wrote a lone line break before its tool calls, replayed on the next turn.
 */

let anthropic: FakeModel;
beforeAll(async () => {
  anthropic = await startFakeAnthropic();
});
afterAll(() => anthropic.close());

const context: ToolContext = toolContext({ route: "r", deliveryId: "d" });
const ping: AgentTool = {
  name: "ping",
  description: "Pings",
  inputSchema: { type: "object", properties: {} },
  execute: async () => ({ ok: true, content: [{ type: "text", text: "pong" }] }),
};

async function run(prompt: string) {
  anthropic.requests.length = 0;
  const log = new ToolCallLog();
  const progress: LoopProgress = { steps: 0, inputTokens: 0, outputTokens: 0 };
  return runToolLoop(
    {
      model: languageModel({ provider: "anthropic", model: "m", base_url: anthropic.baseUrl, api_key: "k" }),
      prompt,
      tools: sdkTools([ping], context, log),
      maxSteps: 3,
      maxTokens: 50,
      signal: context.signal,
      log,
    },
    progress,
  );
}

type Message = { role: string; content: Array<{ type: string; text?: string }> };
const messages = (i: number) => anthropic.requests[i]?.json.messages as Message[];

describe("anthropic: no empty or blank text block reaches the Messages API", () => {
  it("a prompt that rendered to nothing is sent as a line saying so", async () => {
    anthropic.script({ text: "nothing to do" });
    expect((await run(" \n")).text).toBe("nothing to do");
    expect(messages(0)).toEqual([{ role: "user", content: [{ type: "text", text: EMPTY_PROMPT }] }]);
  });

  it("a turn whose text is only a line break before its tool call is replayed without that text block", async () => {
    anthropic.script({ text: "\n\n", toolCalls: [{ name: "ping", args: {} }] }, { text: "done" });
    expect((await run("go")).text).toBe("done");
    const assistant = messages(1).find((m) => m.role === "assistant");
    expect(assistant?.content.map((part) => part.type)).toEqual(["tool_use"]);
  });
});

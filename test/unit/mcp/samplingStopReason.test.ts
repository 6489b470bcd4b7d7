import { CreateMessageResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../../src/actors/agent/runner.js";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { agentSampler } from "../../../src/actors/mcp/gatewayHub.js";
import { serverRequestHandlers } from "../../../src/actors/mcp/serverRequests.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import type { FakeModel } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { testModelRunner } from "../../helpers/testModelRunner.js";

/** A model runner's reply to a sampling request: cut at max_tokens or not. */
function modelRunner(cutAtMaxTokens: boolean): AgentRunner {
  return {
    run: async () => ({
      text: "a summ",
      record: {
        provider: "openai",
        model: "gpt-x",
        steps: 1,
        toolCalls: [],
        usage: { input: 10, output: 5 },
        outcome: "ok",
        ms: 1,
      },
      ...(cutAtMaxTokens ? { cutAtMaxTokens: true } : {}),
    }),
  };
}

async function sample(runner: AgentRunner) {
  const handlers = serverRequestHandlers({
    server: "notes",
    entry: mcpServerSchema.parse({ command: "x", sampling: { enabled: true } }),
    approvals: policyApprovals("deny", silentLogger()),
    runner: agentSampler(() => runner),
    logger: silentLogger(),
  });
  const params = {
    messages: [{ role: "user" as const, content: { type: "text" as const, text: "hi" } }],
    maxTokens: 5,
  };
  return handlers.sampling?.(params, new AbortController().signal);
}

describe("sampling answered by a model: stopReason", () => {
  it("maxTokens when the model stopped at the token limit (the text is cut short)", async () => {
    expect(await sample(modelRunner(true))).toEqual({
      model: "gpt-x",
      role: "assistant",
      content: { type: "text", text: "a summ" },
      stopReason: "maxTokens",
    });
  });

  it("endTurn when it finished its answer, and for echo and command runners", async () => {
    expect((await sample(modelRunner(false)))?.stopReason).toBe("endTurn");
    expect(await sample({ run: async () => ({ text: "echoed" }) })).toMatchObject({
      model: "svc-agent",
      stopReason: "endTurn",
    });
  });
});

// Seen: a sampling answer DeepSeek cut off at finish_reason insufficient_system_resource reported to the server as
// stopReason endTurn, a finished answer, though its text stops mid-sentence.
describe("sampling answered by a model the endpoint cut off", () => {
  let deepseek: FakeModel;
  let streamed: FakeModel;
  beforeAll(async () => {
    [deepseek, streamed] = await Promise.all([startFakeOpenAI(), startFakeOpenAI({ streamAlways: true })]);
  });
  afterAll(async () => {
    await Promise.all([deepseek?.close(), streamed?.close()]);
  });

  const runner = (model: FakeModel): AgentRunner =>
    testModelRunner(
      { provider: "openai", model: "deepseek-chat", base_url: model.baseUrl, max_tokens: 50 },
      [],
    );

  for (const [label, model] of [
    ["JSON", () => deepseek],
    ["streamed", () => streamed],
  ] as const)
    it(`${label}: stopReason is the endpoint's reason (MCP's stopReason is an open string), the text as it is`, async () => {
      model().script({ text: "The three causes are: 1. the", finishReason: "insufficient_system_resource" });
      const result = await sample(runner(model()));
      expect(result).toEqual({
        model: "deepseek-chat",
        role: "assistant",
        content: { type: "text", text: "The three causes are: 1. the" },
        stopReason: "insufficient_system_resource",
      });
      // The server's SDK takes it as a result.
      expect(CreateMessageResultSchema.parse(result).stopReason).toBe("insufficient_system_resource");
      model().script({ text: "Three causes." });
      expect((await sample(runner(model())))?.stopReason).toBe("endTurn");
    });

  // A main run so cut before any text fails (docs/agent.md, Faults); the server is told by the stopReason instead,
  // as for maxTokens.
  for (const [label, model] of [
    ["JSON", () => deepseek],
    ["streamed", () => streamed],
  ] as const)
    it(`${label}: cut off before any text, the answer is empty with the endpoint's reason as its stopReason`, async () => {
      model().script({ text: "", finishReason: "insufficient_system_resource" });
      expect(await sample(runner(model()))).toEqual({
        model: "deepseek-chat",
        role: "assistant",
        content: { type: "text", text: "" },
        stopReason: "insufficient_system_resource",
      });
    });
});

import { describe, expect, it } from "vitest";
import type { AgentRunner } from "../../../src/actors/agent/runner.js";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { agentSampler } from "../../../src/actors/mcp/gatewayHub.js";
import { serverRequestHandlers } from "../../../src/actors/mcp/serverRequests.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";

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

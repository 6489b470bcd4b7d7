import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { createMcpEndpointHost, type McpEndpointHost } from "../../../src/agent/mcpEndpoint/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { commandAgentClient, recordingTool } from "../../helpers/commandAgentEndpoint.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * A command agent's tool call through `SVC_MCP_URL` with arguments nested past 100 levels is refused as a
 * model run's is (docs/agent-tools.md): the tool is not run (an MCP tool's server never gets them) and the
 * agent gets the model run's message as a tool error. Real MCP SDK client over loopback.
 */

const TOO_DEEP = "arguments nest objects or arrays deeper than 100 levels; the tool was not run";

/** `{ "x": [[...]] }`: `levels` levels of objects and arrays, the arguments object the first. */
function nested(levels: number): Record<string, unknown> {
  let value: unknown = [];
  for (let i = 2; i < levels; i++) value = [value];
  return { x: value };
}

let host: McpEndpointHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function connected(tools: readonly AgentTool[]): Promise<Client> {
  host = createMcpEndpointHost();
  return commandAgentClient(await host.openRunEndpoint(tools, toolContext()));
}

describe("the command agents' MCP endpoint and deeply nested arguments", () => {
  it("refuses arguments nested past 100 levels with the model run's message, and does not run the tool", async () => {
    const ran: unknown[] = [];
    const client = await connected([recordingTool(ran, { x: {} })]);
    try {
      for (const levels of [101, 3000]) {
        const result = await client.callTool({ name: "mcp__fixture__echo", arguments: nested(levels) });
        expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: TOO_DEEP }] });
      }
      expect(ran).toEqual([]);
      // At the limit the call runs.
      const result = await client.callTool({ name: "mcp__fixture__echo", arguments: nested(100) });
      expect(result).toMatchObject({ content: [{ type: "text", text: "ran" }] });
      expect(ran).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

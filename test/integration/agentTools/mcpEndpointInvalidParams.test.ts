import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpEndpointHost,
  type McpEndpointHost,
  type RunEndpoint,
} from "../../../src/agent/mcpEndpoint/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { commandAgentClient, postToolsCall, recordingTool } from "../../helpers/commandAgentEndpoint.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * A malformed `tools/call` to a command agent's MCP endpoint (`SVC_MCP_URL`, docs/agent-tools.md) is
 * answered with JSON-RPC's -32602 Invalid params naming what is wrong on one line, not -32603 Internal
 * error with the issues' JSON; the tool is not run. Real endpoint on loopback, raw POSTs and the MCP SDK's
 * client.
 */

/** The recording tool's arguments: `text`, a string. */
const TEXT = { text: { type: "string" } };

let host: McpEndpointHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function opened(tools: readonly AgentTool[]): Promise<RunEndpoint> {
  host = createMcpEndpointHost();
  return host.openRunEndpoint(tools, toolContext());
}

/** The JSON-RPC answer to one `tools/call` with `params`, POSTed as a command agent would. */
async function call(endpoint: RunEndpoint, params: unknown): Promise<Record<string, unknown>> {
  const response = await postToolsCall(endpoint, 7, params);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe("the command agents' MCP endpoint and a malformed tools/call", () => {
  it("answers -32602 Invalid params naming the field on one line, and does not run the tool", async () => {
    const ran: unknown[] = [];
    const endpoint = await opened([recordingTool(ran, TEXT)]);
    expect(await call(endpoint, {})).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32602,
        message: "Invalid tools/call request: params.name: expected string, received undefined",
      },
    });
    expect(await call(endpoint, { name: "mcp__fixture__echo", arguments: "str" })).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32602,
        message: "Invalid tools/call request: params.arguments: expected record, received string",
      },
    });
    expect(ran).toEqual([]);
    // A well-formed call still runs, with its arguments as sent.
    const answered = await call(endpoint, { name: "mcp__fixture__echo", arguments: { text: "hi" } });
    expect(answered).toMatchObject({ result: { content: [{ type: "text", text: "ran" }] } });
    expect(ran).toEqual([{ text: "hi" }]);
  });

  it("is read by an MCP SDK client as one -32602 error, its prefix said once", async () => {
    const client = await commandAgentClient(await opened([recordingTool([], TEXT)]));
    try {
      const failed = await client
        .request({ method: "tools/call", params: { name: 42 } } as never, CallToolResultSchema)
        .then(
          () => undefined,
          (err: unknown) => err as { code?: unknown; message?: unknown },
        );
      expect(failed?.code).toBe(-32602);
      expect(failed?.message).toBe(
        "MCP error -32602: Invalid tools/call request: params.name: expected string, received number",
      );
    } finally {
      await client.close();
    }
  });
});

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RunEndpoint } from "../../src/agent/mcpEndpoint/index.js";
import type { AgentTool } from "../../src/agent/tools/tool.js";

/** A command agent's MCP SDK client, connected to its run's endpoint (`SVC_MCP_URL`) with the run's token. */
export async function commandAgentClient(endpoint: RunEndpoint): Promise<Client> {
  const client = new Client({ name: "command-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
    }),
  );
  return client;
}

/** One JSON-RPC `tools/call` with `params`, POSTed to a run's endpoint as a command agent without an SDK would. */
export function postToolsCall(endpoint: RunEndpoint, id: number, params: unknown): Promise<Response> {
  return fetch(endpoint.url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${endpoint.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }),
  });
}

/** A tool, `mcp__fixture__echo` with arguments `properties`, that records the arguments of each call it runs. */
export function recordingTool(ran: unknown[], properties: Record<string, unknown>): AgentTool {
  return {
    name: "mcp__fixture__echo",
    description: "Records its arguments",
    inputSchema: { type: "object", properties },
    execute: async (args) => {
      ran.push(args);
      return { ok: true, content: [{ type: "text", text: "ran" }] };
    },
  };
}

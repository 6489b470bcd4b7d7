import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();

describe("a call refused for an expired session", () => {
  it("a tool's own JSON-RPC error that quotes an HTTP 404 (an upstream API's) is the call's error, not an expired session", async () => {
    let calls = 0;
    let sessions = 0;
    const build = () => {
      sessions++;
      const server = new Server({ name: "proxy", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "create-issue", inputSchema: { type: "object" as const } }],
      }));
      server.setRequestHandler(CallToolRequestSchema, () => {
        calls++;
        throw new McpError(-32603, "GitHub answered (HTTP 404): Not Found");
      });
      return server;
    };
    const h = ctx.hub(
      ctx.home,
      { gh: entry(IN_MEMORY_ENTRY) },
      { transportFor: inMemoryServers({ gh: build }) },
    );
    await h.settled("gh");
    await expect(h.call("gh", "create-issue", {})).rejects.toMatchObject({
      code: "mcp_call",
      message:
        'mcp_servers.gh: "create-issue" failed: MCP error -32603: GitHub answered (HTTP 404): Not Found',
    });
    expect(calls).toBe(1);
    expect(sessions).toBe(1);
    expect((await h.settled("gh")).state).toBe("connected");
  });
});

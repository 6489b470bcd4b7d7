import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * -32001 is the code the MCP SDK gives its own request timeout, but JSON-RPC leaves -32000 to -32099 to
 * servers for their own errors, and servers use it (a rate limit, an upstream failure): such an answer is
 * the server's error, said with its message, not svc's wait for an answer running out.
 */
describe("a server's error answer with code -32001", () => {
  function rateLimited(): { server: () => Server; listings: () => number; refuseListing: () => void } {
    let listings = 0;
    let refuse = false;
    let latest: Server | undefined;
    return {
      server: () => {
        const server = new Server(
          { name: "limited", version: "1" },
          { capabilities: { tools: { listChanged: true } } },
        );
        server.setRequestHandler(ListToolsRequestSchema, () => {
          listings++;
          if (refuse) throw new McpError(-32001, "Rate limit exceeded: try again in 60 s");
          return { tools: [{ name: "quota", inputSchema: { type: "object" as const } }] };
        });
        server.setRequestHandler(CallToolRequestSchema, () => {
          throw new McpError(-32001, "Rate limit exceeded: try again in 60 s");
        });
        latest = server;
        return server;
      },
      listings: () => listings,
      refuseListing: () => {
        refuse = true;
        void latest?.sendToolListChanged();
      },
    };
  }

  it("fails a call with the server's message, not as the call's timeout", async () => {
    const fake = rateLimited();
    const h = ctx.hub(
      ctx.home,
      { q: entry(IN_MEMORY_ENTRY) },
      { transportFor: inMemoryServers({ q: fake.server }) },
    );
    await h.settled("q");
    await expect(h.call("q", "quota", {})).rejects.toMatchObject({
      code: "mcp_call",
      message: 'mcp_servers.q: "quota" failed: MCP error -32001: Rate limit exceeded: try again in 60 s',
    });
  });

  it("a tool list refresh it refuses is logged with its message, not as a wait for an answer", async () => {
    const fake = rateLimited();
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { q: entry(IN_MEMORY_ENTRY) },
      { transportFor: inMemoryServers({ q: fake.server }), logger: log.logger },
    );
    await h.settled("q");
    fake.refuseListing();
    await vi.waitFor(
      () => expect(log.lines().some((l) => l.includes("tool list refresh failed"))).toBe(true),
      {
        timeout: 5000,
        interval: 10,
      },
    );
    const refresh = log.lines().find((l) => l.includes("tool list refresh failed")) as string;
    expect(JSON.parse(refresh).err).toBe(
      "tools/list failed: MCP error -32001: Rate limit exceeded: try again in 60 s",
    );
  });
});

describe("a server's error answer with code -32000 to resources/templates/list", () => {
  it("is a server without templates, as -32601 is: list_resources gives the resources and no templates", async () => {
    const build = () => {
      const server = new Server({ name: "res", version: "1" }, { capabilities: { resources: {} } });
      server.setRequestHandler(ListResourcesRequestSchema, () => ({
        resources: [{ uri: "file:///a", name: "a" }],
      }));
      // -32000 is also the code the MCP SDK gives a closed connection, but this is the server's answer.
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => {
        throw new McpError(-32000, "resource templates are not supported");
      });
      return server;
    };
    const h = ctx.hub(
      ctx.home,
      { r: entry({ ...IN_MEMORY_ENTRY, tools: { resources: true } }) },
      { transportFor: inMemoryServers({ r: build }) },
    );
    await h.settled("r");
    const listed = await h.call("r", "list_resources", {});
    expect(JSON.parse((listed.content[0] as { text: string }).text)).toEqual({
      resources: [{ uri: "file:///a", name: "a" }],
      resourceTemplates: [],
    });
  });
});

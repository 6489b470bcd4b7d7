import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildToolset } from "../../../src/actors/mcp/toolNames.js";
import { createMcpEndpointHost } from "../../../src/agent/mcpEndpoint/index.js";
import { type McpToolSource, mcpAgentTool } from "../../../src/agent/mcpTools.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { toolContext } from "../../helpers/toolContext.js";

const WEATHER = { temperatureCelsius: 21.5, conditions: "overcast-drizzle" };
const PNG = Buffer.from("89504e470d0a1a0a-fixture-pixels").toString("base64");
const WAV = Buffer.from("RIFF-wave-fixture-samples").toString("base64");
/** One content block of each kind a tool can answer with. */
const BLOCKS: CallToolResult["content"] = [
  { type: "text", text: "see the report" },
  {
    type: "resource_link",
    uri: "file:///reports/q3-summary.md",
    name: "q3-summary",
    mimeType: "text/markdown",
  },
  { type: "image", data: PNG, mimeType: "image/png" },
  { type: "audio", data: WAV, mimeType: "audio/wav" },
  {
    type: "resource",
    resource: { uri: "file:///notes/todo.txt", mimeType: "text/plain", text: "ship it" },
  },
];

/** A real SDK server whose tools answer every kind of MCP result a bridge must pass on unchanged. */
function richServer(): McpServer {
  const server = new McpServer({ name: "rich", version: "1.0.0" });
  server.registerTool(
    "weather",
    {
      title: "Current weather",
      inputSchema: { city: z.string() },
      outputSchema: { temperatureCelsius: z.number(), conditions: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => ({ content: [{ type: "text", text: JSON.stringify(WEATHER) }], structuredContent: WEATHER }),
  );
  server.registerTool("blocks", { annotations: { destructiveHint: false } }, () => ({
    content: BLOCKS,
  }));
  server.registerTool("broken", {}, () => ({
    content: [{ type: "text", text: "the backend refused: quota exhausted" }],
    structuredContent: { code: "quota_exhausted" },
    isError: true,
  }));
  return server;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The rich server's tools registered as the hub registers them, offered at a run's endpoint; an SDK client on it. */
async function agentClient(utilities = false): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await richServer().connect(serverSide);
  const upstream = new Client({ name: "hub", version: "1.0.0" });
  await upstream.connect(clientSide);
  cleanups.push(() => upstream.close());
  const listed = (await upstream.listTools()).tools as Tool[];
  const policy = mcpServerSchema.parse({
    command: "x",
    tools: { resources: utilities, prompts: utilities },
  }).tools;
  const registered = buildToolset("rich", listed, { resources: utilities, prompts: utilities }, policy).tools;
  const source: McpToolSource = {
    tools: () => registered,
    status: () => [{ name: "rich", state: "connected" }],
    settled: async () => undefined,
    callRegistered: async (name, args) => {
      const tool = registered.find((t) => t.name === name);
      return (await upstream.callTool({ name: tool?.original ?? name, arguments: args })) as CallToolResult;
    },
  };
  const host = createMcpEndpointHost();
  cleanups.push(() => host.close());
  const endpoint = await host.openRunEndpoint(
    registered.map((tool) => mcpAgentTool(source, tool)),
    toolContext(),
  );
  const client = new Client({ name: "command-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
    }),
  );
  cleanups.push(() => client.close());
  return client;
}

describe("the command agents' MCP endpoint passes an MCP server's tools and results through unchanged", () => {
  it("lists each tool's title, outputSchema and annotations as the server lists them", async () => {
    const { tools } = await (await agentClient()).listTools();
    const weather = tools.find((t) => t.name === "mcp__rich__weather");
    expect(weather?.title).toBe("Current weather");
    expect(weather?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(weather?.outputSchema).toMatchObject({
      type: "object",
      properties: { temperatureCelsius: { type: "number" }, conditions: { type: "string" } },
    });
    expect(tools.find((t) => t.name === "mcp__rich__blocks")?.annotations).toEqual({
      destructiveHint: false,
    });
  });

  it("lists the utility tools (list_resources, read_resource, ...) as read-only, as svc runs them", async () => {
    const { tools } = await (await agentClient(true)).listTools();
    const utilities = tools.filter((t) =>
      /^mcp__rich__(list_resources|read_resource|list_prompts|get_prompt)$/.test(t.name),
    );
    expect(utilities.map((t) => [t.name, t.annotations])).toEqual([
      ["mcp__rich__list_resources", { readOnlyHint: true }],
      ["mcp__rich__read_resource", { readOnlyHint: true }],
      ["mcp__rich__list_prompts", { readOnlyHint: true }],
      ["mcp__rich__get_prompt", { readOnlyHint: true }],
    ]);
  });

  it("answers structuredContent (checked by the client against the outputSchema) and every content block as sent", async () => {
    const client = await agentClient();
    await client.listTools();
    const weather = await client.callTool({ name: "mcp__rich__weather", arguments: { city: "Oslo" } });
    expect(weather.structuredContent).toEqual(WEATHER);
    const blocks = await client.callTool({ name: "mcp__rich__blocks", arguments: {} });
    expect(blocks.content).toEqual(BLOCKS);
  });

  it("keeps an isError result's text and structuredContent", async () => {
    const broken = await (await agentClient()).callTool({ name: "mcp__rich__broken", arguments: {} });
    expect(broken).toEqual({
      content: [{ type: "text", text: "the backend refused: quota exhausted" }],
      structuredContent: { code: "quota_exhausted" },
      isError: true,
    });
  });
});

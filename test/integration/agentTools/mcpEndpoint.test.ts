import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandRunner } from "../../../src/actors/agent/command.js";
import type { AgentRequest } from "../../../src/actors/agent/runner.js";
import {
  createMcpEndpointHost,
  type McpEndpointHost,
  type RunEndpoint,
} from "../../../src/agent/mcpEndpoint/index.js";
import { clarifyTool, NO_ONE_PRESENT } from "../../../src/agent/tools/clarify.js";
import { builtinTools, lazyWorkspace } from "../../../src/agent/tools/index.js";
import type { AgentTool, JsonSchema, ToolContent } from "../../../src/agent/tools/tool.js";
import { toolsSchema } from "../../../src/config/sections/tools.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { tempHome } from "../../helpers/home.js";
import { toolContext } from "../../helpers/toolContext.js";

const AGENT = await bundledFixture(join(import.meta.dirname, "../../fixtures/agent/mcpClientAgent.mjs"));

/** The fixture MCP server's tools as AgentTools, the way the hub offers them: `mcp__fixture__<tool>`. */
async function fixtureTools(names: readonly string[]): Promise<{ tools: AgentTool[]; client: Client }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await buildServer("legacy").connect(serverSide);
  const client = new Client({ name: "test-hub", version: "1.0.0" });
  await client.connect(clientSide);
  const listed = (await client.listTools()).tools.filter((tool) => names.includes(tool.name));
  const tools = listed.map(
    (tool): AgentTool => ({
      name: `mcp__fixture__${tool.name}`,
      description: tool.description ?? "",
      inputSchema: tool.inputSchema as JsonSchema,
      async execute(args, context) {
        const result = (await client.callTool(
          { name: tool.name, arguments: args as Record<string, unknown> },
          undefined,
          { signal: context.signal },
        )) as CallToolResult;
        const content = result.content.filter((c): c is ToolContent => c.type === "text");
        return result.isError
          ? { ok: false, error: content.map((c) => (c as { text: string }).text).join("") }
          : { ok: true, content };
      },
    }),
  );
  return { tools, client };
}

function request(prompt: unknown): AgentRequest {
  return {
    route: "gh",
    event: "push",
    deliveryId: "d-1",
    prompt: JSON.stringify(prompt),
    toolsets: ["web_extract", "clarify", "fixture"],
    profile: undefined,
  };
}

async function post(url: string, authorization: string | undefined, body: unknown = initialize) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify(body),
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

let host: McpEndpointHost;
let opened: RunEndpoint[];
let hub: Client;
let tools: AgentTool[];
beforeEach(async () => {
  const inner = createMcpEndpointHost();
  opened = [];
  host = {
    openRunEndpoint: async (offered, context) => {
      const endpoint = await inner.openRunEndpoint(offered, context);
      opened.push(endpoint);
      return endpoint;
    },
    close: () => inner.close(),
  };
  const fixture = await fixtureTools(["echo", "add"]);
  hub = fixture.client;
  tools = [...fixture.tools, clarifyTool()];
});
afterEach(async () => {
  await host.close();
  await hub.close();
});

function agent() {
  return commandRunner({
    argv: [process.execPath, AGENT],
    timeoutMs: 30_000,
    tools: { endpoint: host, forRun: async () => ({ tools, context: toolContext() }) },
  });
}

describe("command agents reach their run's tools at SVC_MCP_URL with SVC_MCP_TOKEN", () => {
  it("lists exactly the run's tools (schemas unchanged) and calls an MCP server's tool through them", async () => {
    const reply = JSON.parse(
      (
        await agent().run(
          request({ call: "mcp__fixture__add", arguments: { a: 2, b: 3 } }),
          new AbortController().signal,
        )
      ).text,
    );
    expect(reply.tools.map((t: { name: string }) => t.name)).toEqual([
      "mcp__fixture__echo",
      "mcp__fixture__add",
      "clarify",
    ]);
    const add = (await hub.listTools()).tools.find((t) => t.name === "add");
    expect(reply.tools[1].inputSchema).toEqual(add?.inputSchema);
    expect(reply.result).toEqual({ content: [{ type: "text", text: "5" }] });
  });

  it("runs built-in tools with the run's context, and reports tool errors as MCP tool errors", async () => {
    const clarify = JSON.parse(
      (
        await agent().run(
          request({ call: "clarify", arguments: { question: "which?" } }),
          new AbortController().signal,
        )
      ).text,
    );
    expect(clarify.result).toEqual({ content: [{ type: "text", text: NO_ONE_PRESENT }] });
    const unknown = JSON.parse(
      (
        await agent().run(
          request({ call: "terminal", arguments: { command: "id" } }),
          new AbortController().signal,
        )
      ).text,
    );
    expect(unknown.result).toEqual({
      content: [{ type: "text", text: 'unknown tool "terminal": this run does not offer it' }],
      isError: true,
    });
  });

  it("a command agent runs the terminal tool in the run's workspace through the endpoint", async () => {
    const home = tempHome();
    try {
      const settings = toolsSchema.parse({});
      const runner = commandRunner({
        argv: [process.execPath, AGENT],
        timeoutMs: 30_000,
        tools: {
          endpoint: host,
          forRun: async (req) => ({
            tools: builtinTools(req.toolsets, settings),
            context: toolContext({ workspace: lazyWorkspace(home.dir, req.deliveryId) }),
          }),
        },
      });
      const reply = JSON.parse(
        (
          await runner.run(
            {
              ...request({ call: "terminal", arguments: { command: "echo hi > x; cat x; pwd" } }),
              toolsets: ["terminal"],
            },
            new AbortController().signal,
          )
        ).text,
      );
      expect(reply.tools.map((t: { name: string }) => t.name)).toEqual(["terminal"]);
      expect(reply.result.content[0].text).toMatch(
        new RegExp(`^exit code 0\n--- stdout ---\nhi\n${home.dir}/workspaces/d-1-[0-9a-f]{12}\n$`),
      );
    } finally {
      home.cleanup();
    }
  });

  it("the token is refused once the run has ended", async () => {
    await agent().run(
      request({ call: "mcp__fixture__echo", arguments: { text: "hi" } }),
      new AbortController().signal,
    );
    const [endpoint] = opened;
    if (endpoint === undefined) throw new Error("no endpoint was opened");
    const response = await post(endpoint.url, `Bearer ${endpoint.token}`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="svc"');
  });

  it("refuses a missing, wrong or other run's token, and accepts the run's own", async () => {
    const mine = await host.openRunEndpoint(tools, toolContext());
    const other = await host.openRunEndpoint(tools, toolContext());
    expect((await post(mine.url, undefined)).status).toBe(401);
    expect((await post(mine.url, "Bearer wrong-token")).status).toBe(401);
    expect((await post(mine.url, `Bearer ${other.token}`)).status).toBe(401);
    expect((await post(mine.url, `Basic ${mine.token}`)).status).toBe(401);
    const ok = await post(mine.url, `Bearer ${mine.token}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: 1, result: { serverInfo: { name: "svc-run" } } });
    // Both runs share one listening socket, each under its own path.
    expect(new URL(mine.url).host).toBe(new URL(other.url).host);
    expect(new URL(mine.url).hostname).toBe("127.0.0.1");
    mine.close();
    expect((await post(mine.url, `Bearer ${mine.token}`)).status).toBe(401);
    expect((await post(other.url, `Bearer ${other.token}`)).status).toBe(200);
  });

  it("refuses a request from a web page (an Origin, or a Host that is not loopback: DNS rebinding) with 403, as MCP requires", async () => {
    const mine = await host.openRunEndpoint(tools, toolContext());
    const { port, pathname } = new URL(mine.url);
    const send = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port,
            path: pathname,
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${mine.token}`,
              ...headers,
            },
          },
          (res) => {
            let body = "";
            res.on("data", (chunk: Buffer) => {
              body += chunk.toString();
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify(initialize));
      });
    // A page on another site that learned the token still cannot use it; nor can a rebound name.
    for (const headers of [
      { origin: "http://evil.example" },
      { origin: "null" },
      { origin: `http://127.0.0.1:${Number(port) + 1}` },
      { host: `evil.example:${port}` },
      { host: `127.0.0.1.evil.example:${port}` },
    ]) {
      const answer = await send(headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    }
    // The endpoint's own origin, and loopback names for it, are served as without them.
    for (const headers of [
      {},
      { origin: `http://127.0.0.1:${port}` },
      { host: `localhost:${port}` },
      { host: `[::1]:${port}` },
    ]) {
      expect((await send(headers)).status, JSON.stringify(headers)).toBe(200);
    }
  });

  it("answers a body that is not JSON with JSON-RPC's Parse error (-32700), as the SDK's server does", async () => {
    const mine = await host.openRunEndpoint(tools, toolContext());
    const response = await fetch(mine.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${mine.token}`,
      },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("closing a run's endpoint ends the calls still running", async () => {
    let seen: AbortSignal | undefined;
    const waiting: AgentTool = {
      name: "wait",
      description: "waits for the run to end",
      inputSchema: { type: "object" },
      execute: (_args, context) =>
        new Promise((resolve) => {
          seen = context.signal;
          context.signal.addEventListener("abort", () => resolve({ ok: false, error: "aborted" }));
        }),
    };
    const endpoint = await host.openRunEndpoint([waiting], toolContext());
    const call = post(endpoint.url, `Bearer ${endpoint.token}`, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "wait", arguments: {} },
    });
    await expect.poll(() => seen !== undefined, { timeout: 10_000 }).toBe(true);
    endpoint.close();
    expect(await (await call).json()).toMatchObject({
      result: { isError: true, content: [{ text: "aborted" }] },
    });
  });
});

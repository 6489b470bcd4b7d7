import type { IncomingMessage } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** The SDK's server with tools "big" (read-only: `bytes` characters) and "small" ("ok"), counting calls. */
function bigToolServer(counted: () => void): McpServer {
  const server = new McpServer({ name: "big", version: "1.0.0" });
  server.registerTool(
    "big",
    { inputSchema: { bytes: z.number() }, annotations: { readOnlyHint: true } },
    ({ bytes }) => {
      counted();
      return { content: [{ type: "text", text: "x".repeat(bytes) }] };
    },
  );
  server.registerTool("small", {}, () => ({ content: [{ type: "text", text: "ok" }] }));
  return server;
}

/** A stateless Streamable HTTP server of `bigToolServer`: `calls` counts the calls of "big" it got. */
async function streamableHttp(jsonResponse: boolean): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const port = await serve(async (req, res) => {
    const body = req.method === "POST" ? await readBody(req) : undefined;
    const server = bigToolServer(() => {
      calls += 1;
    });
    // No sessionIdGenerator: stateless, a server per request.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: jsonResponse });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, calls: () => calls };
}

/**
 * A remote server's answer is read into memory whole: without a bound, one tool answering without end (a
 * runaway log, a server bug) grew the gateway until the system killed it. One message may be as large as
 * a stdio server's line.
 */
describe.each([
  ["a JSON answer", true],
  ["an SSE response stream", false],
])("a Streamable HTTP answer over svc's 64 MiB limit for one message (%s)", (_, jsonResponse) => {
  it("fails the call saying so, is not replayed for the same answer, and leaves the session usable", async () => {
    const server = await streamableHttp(jsonResponse);
    const hub = ctx.hub(ctx.home, { h: entry({ url: server.url, timeout: 60 }) });
    expect((await hub.settled("h")).state).toBe("connected");
    await expect(hub.call("h", "big", { bytes: 65 * 1024 * 1024 })).rejects.toThrow(
      `mcp_servers.h: "big" failed: the server's answer is more than 64 MiB (svc's limit for one message), so svc stopped reading it — a fault of the server (have the tool answer less at once)`,
    );
    expect(server.calls()).toBe(1);
    expect(hub.status()[0]?.state).toBe("connected");
    expect(text(await hub.call("h", "small", {}))).toBe("ok");
  }, 60_000);
});

/** A legacy SSE server of `bigToolServer`: its answers come on the session's one event stream. */
async function sse(): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const sessions = new Map<string, SSEServerTransport>();
  const port = await serve(async (req, res) => {
    if (req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      await bigToolServer(() => {
        calls += 1;
      }).connect(transport);
      return;
    }
    const session = new URL(req.url ?? "", "http://x").searchParams.get("sessionId") ?? "";
    await sessions.get(session)?.handlePostMessage(req, res);
  });
  return { url: `http://127.0.0.1:${port}/sse`, calls: () => calls };
}

describe("an answer over svc's 64 MiB limit for one message on transport: sse", () => {
  it("closes the event stream, which is the session, and fails the call saying so, not replayed", async () => {
    const server = await sse();
    const hub = ctx.hub(ctx.home, { h: entry({ url: server.url, transport: "sse", timeout: 60 }) });
    expect((await hub.settled("h")).state).toBe("connected");
    await expect(hub.call("h", "big", { bytes: 65 * 1024 * 1024 })).rejects.toThrow(
      `mcp_servers.h: "big" failed: the server's answer is more than 64 MiB (svc's limit for one message), so svc stopped reading it`,
    );
    expect(server.calls()).toBe(1);
    expect(text(await hub.call("h", "small", {}))).toBe("ok");
  }, 60_000);
});

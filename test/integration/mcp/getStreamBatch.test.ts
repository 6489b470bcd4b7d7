import type { ServerResponse } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

const tool = (name: string) => ({ name, inputSchema: { type: "object" } });

/**
 * A 2025-03-26 Streamable HTTP server (JSON answers to POSTs) whose standalone GET stream is kept open for
 * the test to write to; its second tools/list has one tool more than its first. `posted` holds every
 * message the client POSTed that is not a request (its answers to the server's requests, its notifications).
 */
async function streamingServer() {
  const posted: unknown[] = [];
  let listings = 0;
  let opened: (res: ServerResponse) => void = () => undefined;
  const getStream = new Promise<ServerResponse>((resolve) => {
    opened = resolve;
  });
  const port = await serve(async (req, res) => {
    const session = { "mcp-session-id": "sess-batch-7f3a" };
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream", ...session }).flushHeaders();
      opened(res);
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body) as { id?: number; method?: string };
    if (message.id === undefined || message.method === undefined) {
      posted.push(message);
      res.writeHead(202, session).end();
      return;
    }
    const answer = (result: unknown) =>
      res
        .writeHead(200, { "content-type": "application/json", ...session })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    if (message.method === "initialize")
      answer({
        protocolVersion: "2025-03-26",
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "batching", version: "1" },
      });
    else if (message.method === "tools/list")
      answer({ tools: (listings++ === 0 ? ["first_tool"] : ["first_tool", "added_tool"]).map(tool) });
    else answer({});
  });
  return { url: `http://127.0.0.1:${port}/mcp`, posted, getStream };
}

describe("a JSON-RPC batch in one event of the standalone GET stream (server-initiated messages)", () => {
  it("is handled message by message: the tool list is refreshed and the ping answered", async () => {
    const s = await streamingServer();
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url, skip_preflight: true }) });
    expect((await h.settled("web")).state).toBe("connected");
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__web__first_tool"]);
    const batch = [
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
      { jsonrpc: "2.0", id: "server-ping-41", method: "ping" },
    ];
    (await s.getStream).write(`id: ev-batch-1\nevent: message\ndata: ${JSON.stringify(batch)}\n\n`);
    await vi.waitFor(
      () => {
        expect(s.posted).toContainEqual({ jsonrpc: "2.0", id: "server-ping-41", result: {} });
        expect(h.tools().map((t) => t.name)).toEqual(["mcp__web__first_tool", "mcp__web__added_tool"]);
      },
      { timeout: 5000, interval: 20 },
    );
  });
});

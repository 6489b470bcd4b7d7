import type { IncomingMessage, ServerResponse } from "node:http";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { entry, readRpcRequest, text, useHubs, useLoopbackHttp } from "./harness.js";
import { sdkSessions } from "./sdkSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * A Streamable HTTP server (raw) that answers each request in an SSE stream and leaves the stream open
 * after the answer, where MCP says it should end it: `open` counts the streams still open on its side.
 */
async function keepsStreamsOpen(answer: (message: { id: number; method: string }) => unknown) {
  const state = { open: 0 };
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    const message = await readRpcRequest(req, res);
    if (message === undefined) return;
    const result =
      message.method === "initialize"
        ? {
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "open", version: "1" },
          }
        : message.method === "tools/list"
          ? { tools: [{ name: "t", inputSchema: { type: "object" } }] }
          : undefined;
    const reply =
      result === undefined
        ? answer(message as { id: number; method: string })
        : { jsonrpc: "2.0", id: message.id, result };
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
    state.open++;
    res.on("close", () => state.open--);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

describe("a POST's response stream the server keeps open after the answer", () => {
  it("is closed by svc once every request of the POST is answered, so calls do not pile up open connections", async () => {
    const s = await keepsStreamsOpen((m) => ({
      jsonrpc: "2.0",
      id: m.id,
      result: { content: [{ type: "text", text: "ok" }] },
    }));
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url }) });
    expect((await h.settled("web")).state).toBe("connected");
    for (let i = 0; i < 5; i++) expect(text(await h.call("web", "t", {}))).toBe("ok");
    await vi.waitFor(() => expect(s.state.open).toBe(0), { timeout: 5000, interval: 20 });
  });

  it("an answer there that is no valid JSON-RPC fails its call at once, not at the call's timeout", async () => {
    const s = await keepsStreamsOpen((m) => ({ jsonrpc: "2.0", id: m.id, error: { code: -32000 } }));
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url, timeout: 10 }) });
    expect((await h.settled("web")).state).toBe("connected");
    await expect(h.call("web", "t", {})).rejects.toThrow(
      'mcp_servers.web: "t" failed: MCP error -32000: the server answered with an error without a message: {"code":-32000}',
    );
  });
});

describe("a POST's resumable response stream whose answers were all errors", () => {
  it("is not reopened with GET and Last-Event-ID once answered, so each error answer leaves no stream open", async () => {
    // An SDK server with an event store (as server-everything runs) primes each response stream with an
    // event id; the SDK's client resumes such a stream after its end unless it carried a result.
    const resumed: string[] = [];
    const sdk = sdkSessions(
      {
        eventStore: new InMemoryEventStore(),
        retryInterval: 1,
      },
      async (created) => {
        const server = new Server({ name: "errors", version: "1" }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: [
            { name: "boom", inputSchema: { type: "object" as const } },
            { name: "fine", inputSchema: { type: "object" as const } },
          ],
        }));
        server.setRequestHandler(CallToolRequestSchema, (request) => {
          if (request.params.name === "boom") throw new McpError(-32000, "boom failed");
          return { content: [{ type: "text", text: "fine" }] };
        });
        await server.connect(created);
      },
    );
    const port = await serve(async (req, res) => {
      const lastEventId = req.headers["last-event-id"];
      if (req.method === "GET" && typeof lastEventId === "string") resumed.push(lastEventId);
      await sdk.handle(req, res);
    });
    const h = ctx.hub(ctx.home, { web: entry({ url: `http://127.0.0.1:${port}/mcp` }) });
    expect((await h.settled("web")).state).toBe("connected");
    for (let i = 0; i < 3; i++)
      await expect(h.call("web", "boom", {})).rejects.toThrow("MCP error -32000: boom failed");
    // The server asks for a retry after 1 ms: a resumption the client makes comes well within this.
    await new Promise((r) => setTimeout(r, 200));
    expect(text(await h.call("web", "fine", {}))).toBe("fine");
    expect(resumed).toEqual([]);
  });
});

describe("a POST's resumable response stream the server ends before the answer (SSE polling)", () => {
  it("is resumed with GET and Last-Event-ID, and the call gets the answer sent there", async () => {
    const resumed: string[] = [];
    const sdk = sdkSessions(
      {
        eventStore: new InMemoryEventStore(),
        retryInterval: 1,
      },
      async (created) => {
        const server = new McpServer({ name: "polling", version: "1" });
        server.registerTool("poll", {}, async (extra) => {
          // The server ends the call's stream at once and answers later, on the stream the client resumes.
          extra.closeSSEStream?.();
          await new Promise((r) => setTimeout(r, 100));
          return { content: [{ type: "text", text: "polled" }] };
        });
        await server.connect(created);
      },
    );
    const port = await serve(async (req, res) => {
      const lastEventId = req.headers["last-event-id"];
      if (req.method === "GET" && typeof lastEventId === "string") resumed.push(lastEventId);
      await sdk.handle(req, res);
    });
    const h = ctx.hub(ctx.home, { web: entry({ url: `http://127.0.0.1:${port}/mcp` }) });
    expect((await h.settled("web")).state).toBe("connected");
    expect(text(await h.call("web", "poll", {}))).toBe("polled");
    expect(resumed).toHaveLength(1);
  });
});

describe("the response stream of a call given up (its timeout, the run's end)", () => {
  /** An SDK server that stops a cancelled tool and sends no answer: the call's stream stays open at its end. */
  async function neverAnswering(timeout: number) {
    const state = { open: 0, started: 0 };
    const sdk = sdkSessions({}, async (created) => {
      const server = new McpServer({ name: "slow", version: "1" });
      server.registerTool("slow", {}, async (extra) => {
        state.started++;
        await new Promise<void>((stopped) => extra.signal.addEventListener("abort", () => stopped()));
        return { content: [{ type: "text", text: "never sent" }] };
      });
      await server.connect(created);
    });
    const port = await serve(async (req, res) => {
      if (req.method === "POST") {
        state.open++;
        res.on("close", () => state.open--);
      }
      await sdk.handle(req, res);
    });
    const h = ctx.hub(ctx.home, { web: entry({ url: `http://127.0.0.1:${port}/mcp`, timeout }) });
    expect((await h.settled("web")).state).toBe("connected");
    return { h, state };
  }

  it("is closed once the server is told of the cancel, though the server never ends it: a timeout", async () => {
    const { h, state } = await neverAnswering(0.2);
    await expect(h.call("web", "slow", {})).rejects.toThrow(/did not answer within 0\.2 s \(timeout\)/);
    await vi.waitFor(() => expect(state.open).toBe(0), { timeout: 5000, interval: 20 });
  });

  it("is closed once the server is told of the cancel, though the server never ends it: the run's end", async () => {
    // A timeout no loaded machine reaches before the run ends the call.
    const { h, state } = await neverAnswering(300);
    const run = new AbortController();
    const call = h.call("web", "slow", {}, run.signal);
    await vi.waitFor(() => expect(state.started).toBe(1), { timeout: 5000, interval: 10 });
    run.abort();
    await expect(call).rejects.toThrow(/was canceled: the run ended before it answered/);
    await vi.waitFor(() => expect(state.open).toBe(0), { timeout: 5000, interval: 20 });
  });
});

describe("a call given up before its answer's headers came (a server answering in JSON)", () => {
  it("gives up its POST once the server is told of the cancel: such a server never answers a cancelled request", async () => {
    // An SDK server set to answer in JSON (enableJsonResponse) sends its answer when the tool is done, and
    // none for a cancelled request: the POST would wait for the session's life.
    const state = { open: 0, done: 0 };
    const sdk = sdkSessions(
      {
        enableJsonResponse: true,
      },
      async (created) => {
        const server = new McpServer({ name: "json", version: "1" });
        server.registerTool("slow", {}, async () => {
          await new Promise((r) => setTimeout(r, 300));
          state.done++;
          return { content: [{ type: "text", text: "too late" }] };
        });
        await server.connect(created);
      },
    );
    const port = await serve(async (req, res) => {
      if (req.method === "POST") {
        state.open++;
        res.on("close", () => state.open--);
      }
      await sdk.handle(req, res);
    });
    const h = ctx.hub(ctx.home, { web: entry({ url: `http://127.0.0.1:${port}/mcp`, timeout: 0.1 }) });
    expect((await h.settled("web")).state).toBe("connected");
    await expect(h.call("web", "slow", {})).rejects.toThrow(/did not answer within 0\.1 s \(timeout\)/);
    await vi.waitFor(() => expect(state.done).toBe(1), { timeout: 5000, interval: 20 });
    await vi.waitFor(() => expect(state.open).toBe(0), { timeout: 5000, interval: 20 });
  });
});

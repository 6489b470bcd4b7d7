import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpSession } from "../../../src/io/mcp/session.js";
import { openSession } from "../../../src/io/mcp/session.js";
import { createTransport } from "../../../src/io/mcp/transport.js";
import { entry, readRpcRequest, text, useHubs, useLoopbackHttp } from "./harness.js";
import { sdkSessions } from "./sdkSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();
const sessions: McpSession[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const s of sessions.splice(0)) await s.close();
});

/**
 * A raw Streamable HTTP server: initialize answered in JSON, notifications accepted (202); its event
 * stream (`GET`) answered by `get`. `ended` counts the GETs it has finished answering.
 */
async function server(get: (res: ServerResponse) => void) {
  const state = { ended: 0 };
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") {
      res.on("finish", () => state.ended++);
      get(res);
      return;
    }
    const message = await readRpcRequest(req, res);
    if (message === undefined) return;
    const result = {
      protocolVersion: message.params?.protocolVersion,
      capabilities: {},
      serverInfo: { name: "streams", version: "1" },
    };
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

/** Opens a session on `url` whose fetch counts the GETs it sends (the server's stream), with fake timers. */
async function open(url: string) {
  const gets = { sent: 0 };
  const counting: FetchLike = (u, init) => {
    if ((init?.method ?? "GET") === "GET") gets.sent++;
    return fetch(u, init);
  };
  const session = await openSession({
    name: "streams",
    protocol: "legacy",
    makeTransport: () => createTransport(entry({ url }), { fetch: counting }),
    timeoutMs: 5000,
  });
  sessions.push(session);
  return gets;
}

/** Moves the fake clock `ms` in 100 ms steps, letting each GET sent meanwhile be answered and read. */
async function pass(ms: number, gets: { sent: number }, state: { ended: number }) {
  for (let t = 0; t < ms; t += 100) {
    await vi.advanceTimersByTimeAsync(100);
    await vi.waitFor(() => expect(state.ended).toBe(gets.sent), { timeout: 2000, interval: 2 });
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("the server's event stream (GET) ending at once", () => {
  it("is reopened at most once a second, less often as it keeps ending, not in a hot loop after retry: 0", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const s = await server((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("retry: 0\n\n");
    });
    const gets = await open(s.url);
    await vi.waitFor(() => expect(gets.sent).toBe(1), { timeout: 2000, interval: 2 });
    await pass(10_000, gets, s.state);
    // 1 s, 2 s, 4 s after each end: the stream is opened at 0, ~1, ~3 and ~7 s.
    expect(gets.sent).toBeGreaterThanOrEqual(2);
    expect(gets.sent).toBeLessThanOrEqual(5);
  });

  it("refused with 405 (the server offers none) is never opened again", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const s = await server((res) => {
      res.writeHead(405).end();
    });
    const gets = await open(s.url);
    await vi.waitFor(() => expect(gets.sent).toBe(1), { timeout: 2000, interval: 2 });
    await pass(5_000, gets, s.state);
    expect(gets.sent).toBe(1);
  });
});

describe("a server that refused its event stream (405 to the GET)", () => {
  it("is not asked again when it reconnects, until a reload changes its url", async () => {
    // An SDK server with a tool, behind a rule that refuses the stream's GET (`gets` counts them; the
    // preflight's GET, sent before there is a session, is answered too but not counted).
    const gets = { n: 0 };
    const sdk = sdkSessions({}, async (created) => {
      const server = new McpServer({ name: "no-stream", version: "1" });
      server.registerTool("fine", { annotations: { readOnlyHint: true } }, () => ({
        content: [{ type: "text", text: "fine" }],
      }));
      await server.connect(created);
    });
    const port = await serve(async (req, res) => {
      if (req.method === "GET") {
        if (req.headers["mcp-session-id"] !== undefined) gets.n++;
        res.writeHead(405, { allow: "POST" }).end();
        return;
      }
      await sdk.handle(req, res);
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    const h = ctx.hub(ctx.home, { s: entry({ url }) });
    // A call after each connect: the stream's GET, sent at the connect, has been answered by then.
    const connectedAndCalled = async () => {
      expect((await h.settled("s")).state).toBe("connected");
      expect(text(await h.call("s", "fine", {}))).toBe("fine");
    };
    await connectedAndCalled();
    await vi.waitFor(() => expect(gets.n).toBe(1), { timeout: 5000, interval: 5 });
    // The entry changed (a header): a new connection, to the same url.
    await h.reload({ s: entry({ url, headers: { "x-note": "1" } }) });
    await connectedAndCalled();
    expect(gets.n).toBe(1);
    // Another url: the server there may offer the stream.
    await h.reload({ s: entry({ url: `${url}?v=2`, headers: { "x-note": "1" } }) });
    await connectedAndCalled();
    await vi.waitFor(() => expect(gets.n).toBe(2), { timeout: 5000, interval: 5 });
  });
});

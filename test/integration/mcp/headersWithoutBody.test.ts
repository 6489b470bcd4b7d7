import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { entry, readRpcRequest, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * A raw Streamable HTTP server that answers `initialize` and `tools/list`, and answers each `tools/call`
 * with the response headers of `type` (JSON or SSE) at once and then never a byte of the body. `open`
 * counts the calls' connections still open on its side.
 */
async function headersOnly(type: "application/json" | "text/event-stream") {
  const state = { open: 0, calls: 0 };
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    const message = await readRpcRequest(req, res);
    if (message === undefined) return;
    if (message.method === "tools/call") {
      state.calls++;
      state.open++;
      res.on("close", () => state.open--);
      res.writeHead(200, { "content-type": type });
      res.flushHeaders();
      return;
    }
    const result =
      message.method === "initialize"
        ? {
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "headers-only", version: "1" },
          }
        : { tools: [{ name: "t", inputSchema: { type: "object" } }] };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

describe("a call whose answer's headers come and whose body never does", () => {
  for (const type of ["application/json", "text/event-stream"] as const) {
    it(`${type}: the timeout fails the call and svc closes that connection`, async () => {
      const s = await headersOnly(type);
      // A second: on a loaded machine 0.2 s could pass before the server had read the call, which it then never saw.
      const h = ctx.hub(ctx.home, { web: entry({ url: s.url, timeout: 1 }) });
      expect((await h.settled("web")).state).toBe("connected");
      await expect(h.call("web", "t", {})).rejects.toThrow(/did not answer within 1 s \(timeout\)/);
      expect(s.state.calls).toBe(1);
      await vi.waitFor(() => expect(s.state.open).toBe(0), { timeout: 2000, interval: 10 });
    });
  }
});

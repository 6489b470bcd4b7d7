import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, useHubs } from "./harness.js";

const ctx = useHubs();
let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A stateless Streamable HTTP server whose tools/call answers HTTP 500 with an empty body. */
async function failingCalls(): Promise<string> {
  server = createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method?: string };
    if (body.method === "tools/call") {
      res.writeHead(500).end();
      return;
    }
    // No sessionIdGenerator: a stateless server.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    const mcp = buildServer("legacy");
    await mcp.connect(transport);
    res.on("close", () => void mcp.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("a tool call the server answers with an HTTP error", () => {
  it("fails naming the HTTP status even when the body is empty", async () => {
    const h = ctx.hub(ctx.home, { web: entry({ url: await failingCalls() }) });
    expect((await h.settled("web")).state).toBe("connected");
    await expect(h.call("web", "add", { a: 1, b: 2 })).rejects.toMatchObject({
      code: "mcp_call",
      message: expect.stringMatching(/^mcp_servers\.web: "add" failed: .*\(HTTP 500\)$/),
    });
  });
});

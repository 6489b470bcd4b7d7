import type { IncomingMessage } from "node:http";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { describe, expect, it } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/**
 * An SSE server as Express-based ones behave: HEAD reaches the GET handler, and Node never sends the
 * headers of a HEAD response whose body is an endless event stream — the HEAD hangs.
 */
async function expressLikeSse(): Promise<{ url: string; methods: string[] }> {
  const sessions = new Map<string, SSEServerTransport>();
  const methods: string[] = [];
  const port = await serve(async (req, res) => {
    methods.push(`${req.method} ${req.url}`);
    if ((req.method === "GET" || req.method === "HEAD") && req.url === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      await buildServer("legacy").connect(transport);
      return;
    }
    const sid = new URL(req.url ?? "", "http://x").searchParams.get("sessionId") ?? "";
    const transport = sessions.get(sid);
    if (req.method !== "POST" || transport === undefined) {
      res.writeHead(404).end();
      return;
    }
    await transport.handlePostMessage(req, res, await body(req));
  });
  return { url: `http://127.0.0.1:${port}/sse`, methods };
}

describe("preflight of an SSE endpoint (transport: sse)", () => {
  it("probes with GET only: a HEAD that never answers does not use up connect_timeout", async () => {
    const sse = await expressLikeSse();
    const h = ctx.hub(ctx.home, { old: entry({ url: sse.url, transport: "sse", connect_timeout: 3 }) });
    expect(await h.settled("old")).toMatchObject({ state: "connected" });
    expect(text(await h.call("old", "echo", { text: "through" }))).toBe("through");
    expect(sse.methods).not.toContain("HEAD /sse");
  });
});

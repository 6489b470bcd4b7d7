import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";

const KEY = "ak-9f8e7d6c5b4a3921";
const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * A Streamable HTTP server (JSON answers) that connects and lists a tool, then refuses every ping with a
 * 403 quoting the key it was sent, as API gateways in front of MCP servers do.
 */
async function refusingPings(answered = ["initialize", "tools/list"]): Promise<string> {
  const port = await serve(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body || "{}") as { id?: number; method?: string };
    const answer = (result: unknown) =>
      res
        .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    if (req.method !== "POST") res.writeHead(405).end();
    else if (message.id === undefined) res.writeHead(202).end();
    else if (message.method === "initialize")
      answer({
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "p", version: "1" },
      });
    else if (message.method === "tools/list" && answered.includes("tools/list"))
      answer({ tools: [{ name: "t", inputSchema: { type: "object" } }] });
    else
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`key ${String(req.headers["x-api-key"])} is not valid for ${message.method}`);
  });
  return `http://127.0.0.1:${port}/mcp`;
}

describe("a keepalive ping the server refuses (simulated clock)", () => {
  it("the status names the HTTP status, and the key the server quoted is [redacted]", async () => {
    const url = await refusingPings();
    ctx.home.write(".env", `MCP_KEY=${KEY}\n`);
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      {
        p: entry({
          url,
          headers: { "X-Api-Key": `$\{MCP_KEY}` },
          keepalive_interval: 5,
          skip_preflight: true,
        }),
      },
      { clock },
    );
    expect((await h.settled("p")).state).toBe("connected");
    clock.increment(5_000);
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("reconnecting"), {
      timeout: 5000,
      interval: 20,
    });
    expect(h.status()[0]?.lastError).toBe(
      "keepalive ping failed: Streamable HTTP error: Error POSTing to endpoint: key [redacted] is not valid for ping (HTTP 403)",
    );
  });
});

describe("a tools/list the server refuses at connect", () => {
  it("the status names the HTTP status, and the key the server quoted is [redacted]", async () => {
    const url = await refusingPings(["initialize"]);
    ctx.home.write(".env", `MCP_KEY=${KEY}\n`);
    const h = ctx.hub(ctx.home, {
      p: entry({ url, headers: { "X-Api-Key": `$\{MCP_KEY}` }, skip_preflight: true }),
    });
    const status = await h.settled("p");
    expect(status.state).toBe("failed");
    expect(status.lastError).toBe(
      "mcp_servers.p: Streamable HTTP error: Error POSTing to endpoint: key [redacted] is not valid for tools/list (HTTP 403)",
    );
  });
});

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";
import { sdkSessions } from "./sdkSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * Preflight: the HEAD and GET svc sends before the handshake only fail a connect on a definite wrong answer
 * (a 2xx that is not MCP). A server that never answers them (MCP on POST only, behind a front that holds
 * other methods) gives no verdict: each probe has a share of connect_timeout, and the connect goes on.
 */
describe("a Streamable HTTP server that never answers the preflight's HEAD and GET", () => {
  it("is connected within connect_timeout, as with skip_preflight: true", async () => {
    const methods: string[] = [];
    const { handle } = sdkSessions({ enableJsonResponse: true }, async (transport) => {
      const server = new Server({ name: "post-only", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "lookup", inputSchema: { type: "object" as const } }],
      }));
      await server.connect(transport);
    });
    const port = await serve(async (req, res) => {
      methods.push(req.method as string);
      if (req.method !== "POST") return; // never answered
      let body = "";
      for await (const chunk of req) body += chunk;
      await handle(req, res, JSON.parse(body));
    });
    // (Before, the GET had the whole wait: the connect timed out naming the HEAD and GET it sent.)
    const h = ctx.hub(ctx.home, { post: entry({ url: `http://127.0.0.1:${port}/mcp`, connect_timeout: 6 }) });
    const status = await h.settled("post");
    expect(status.lastError).toBeUndefined();
    expect(status.state).toBe("connected");
    expect(h.toolsOf("post").map((t) => t.original)).toEqual(["lookup"]);
    expect(methods.slice(0, 3)).toEqual(["HEAD", "GET", "POST"]);
  });
});

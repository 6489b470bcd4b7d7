import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { expect, it, vi } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  return raw === "" ? undefined : JSON.parse(raw);
}

/**
 * A Streamable HTTP server (stateful, the SDK's) that answers a POST of notifications with `200 OK` and no
 * body where MCP says `202 Accepted`, as servers written on web frameworks do.
 */
async function okForNotifications(): Promise<string> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const port = await serve(async (req, res) => {
    if (req.method === "HEAD") {
      res.writeHead(405).end();
      return;
    }
    const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => ServerResponse;
    res.writeHead = ((status: number, ...rest: unknown[]) =>
      writeHead(status === 202 ? 200 : status, ...rest)) as typeof res.writeHead;
    const id = req.headers["mcp-session-id"];
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    const transport: StreamableHTTPServerTransport =
      known ??
      new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid): void => {
          sessions.set(sid, transport);
        },
      });
    if (known === undefined) await buildServer("legacy").connect(transport);
    await transport.handleRequest(req, res, parsed);
  });
  return `http://127.0.0.1:${port}/mcp`;
}

it("a server that answers notifications/initialized with 200 instead of 202 still gets its event stream: its tools/list_changed is heard", async () => {
  const h = ctx.hub(ctx.home, { web: entry({ url: await okForNotifications() }) });
  expect((await h.settled("web")).state).toBe("connected");
  expect(text(await h.call("web", "add-tool", { name: "late" }))).toBe("added late");
  // The server sends notifications/tools/list_changed on the GET event stream, its only way to say it.
  await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__web__late"), {
    timeout: 5000,
    interval: 20,
  });
});

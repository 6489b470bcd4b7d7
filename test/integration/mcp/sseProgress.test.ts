import type { ServerResponse } from "node:http";
import { expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * A legacy SSE server whose tool reports its last progress right before its answer: both reach the client
 * in one chunk of the event stream (one write here; any server's two writes that the network joins), as
 * two events or as one event holding both (a JSON-RPC batch, which a 2025-03-26 server may send).
 */
async function progressRightBeforeAnswer(batch: boolean): Promise<string> {
  let stream: ServerResponse | undefined;
  const port = await serve(async (req, res) => {
    if (req.method === "GET") {
      stream = res.writeHead(200, { "content-type": "text/event-stream" });
      stream.write("event: endpoint\ndata: /messages\n\n");
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    res.writeHead(202).end();
    const message = JSON.parse(body) as {
      id?: number;
      method: string;
      params?: { _meta?: { progressToken?: number } };
    };
    if (message.id === undefined) return;
    const answer = (result: unknown) => ({ jsonrpc: "2.0", id: message.id, result });
    if (message.method === "initialize")
      stream?.write(
        event(
          answer({
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "p", version: "1" },
          }),
        ),
      );
    else if (message.method === "tools/list")
      stream?.write(event(answer({ tools: [{ name: "work", inputSchema: { type: "object" } }] })));
    else if (message.method === "tools/call") {
      const progressToken = message.params?._meta?.progressToken;
      const progress = {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken, progress: 2, total: 2, message: "done" },
      };
      const result = answer({ content: [{ type: "text", text: "worked" }] });
      stream?.write(batch ? event([progress, result]) : event(progress) + event(result));
    }
  });
  return `http://127.0.0.1:${port}/sse`;
}

it.each([
  ["two events", false],
  ["one batch", true],
])(
  "a progress notification an SSE server sends right before its answer (%s) is logged, not lost",
  async (_, batch) => {
    const log = captureLogger();
    const url = await progressRightBeforeAnswer(batch);
    const h = ctx.hub(ctx.home, { p: entry({ url, transport: "sse" }) }, { logger: log.logger });
    await h.settled("p");
    expect(text(await h.call("p", "work", {}))).toBe("worked");
    expect(log.messages()).toContain('[mcp] p: "work" progress 2/2 — done');
  },
);

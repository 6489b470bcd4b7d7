import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { sdkSessions } from "./sdkSessions.js";

/** How the server lists its tool "read_item": with readOnlyHint true, with readOnlyHint false, or not at all. */
export type ReadItemListing = "read-only" | "writes" | "gone";

export interface ChangingListing {
  readonly url: string;
  /** What the next `tools/list` answers for "read_item" (a server updated or restarted between sessions). */
  listing: ReadItemListing;
  /** Times "read_item" ran. */
  readonly runs: () => number;
  /**
   * The next call of "read_item" runs, then the server forgets every session and drops the call's connection
   * before it answers (a server restarted mid-answer): the client finds its session lost under the call.
   */
  cutNextCall(): void;
  /** The next `tools/list` (a connect's) is answered 404 "Session not found": the server forgot the session. */
  forgetAtNextListing(): void;
  /** The server forgets every session now (a restart): the next request naming one is answered 404. */
  forgetSessions(): void;
  /** Every request that came, as `METHOD rpc-method` (`POST tools/call`, `GET `). */
  readonly requests: string[];
}

/**
 * A Streamable HTTP server (the SDK's) whose tool "read_item" the test lists otherwise between sessions, and
 * whose sessions it can make the server forget mid-call or at a listing. A request naming a session the
 * server does not know is answered 404 "Session not found", as the spec has it.
 */
export async function changingListing(
  serve: (handler: RequestListener) => Promise<number>,
): Promise<ChangingListing> {
  let listing: ReadItemListing = "read-only";
  let runs = 0;
  let cutNext = false;
  let forgetAtListing = false;
  let callResponse: ServerResponse | undefined;
  const requests: string[] = [];
  const { sessions, handle } = sdkSessions({}, async (transport) => {
    const server = new Server({ name: "changing", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools:
        listing === "gone"
          ? []
          : [
              {
                name: "read_item",
                inputSchema: { type: "object" as const },
                annotations: { readOnlyHint: listing === "read-only" },
              },
            ],
    }));
    server.setRequestHandler(CallToolRequestSchema, () => {
      runs++;
      if (cutNext) {
        cutNext = false;
        sessions.clear();
        callResponse?.socket?.destroy();
      }
      return { content: [{ type: "text", text: "item" }] };
    });
    await server.connect(transport);
  });
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "HEAD") {
      res.writeHead(405).end();
      return;
    }
    let body: unknown;
    if (req.method === "POST") {
      let text = "";
      for await (const chunk of req) text += chunk;
      body = JSON.parse(text);
    }
    const method = (body as { method?: string } | undefined)?.method ?? "";
    requests.push(`${req.method} ${method}`);
    if (method === "tools/list" && forgetAtListing) {
      forgetAtListing = false;
      sessions.clear();
    }
    if (method === "tools/call") callResponse = res;
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string" && !sessions.has(id)) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(
          JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
        );
      return;
    }
    await handle(req, res, body);
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get listing() {
      return listing;
    },
    set listing(next) {
      listing = next;
    },
    runs: () => runs,
    cutNextCall: () => {
      cutNext = true;
    },
    forgetAtNextListing: () => {
      forgetAtListing = true;
    },
    forgetSessions: () => sessions.clear(),
    requests,
  };
}

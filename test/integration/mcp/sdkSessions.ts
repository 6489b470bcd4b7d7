import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  StreamableHTTPServerTransport,
  type StreamableHTTPServerTransportOptions,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/**
 * The sessions of an SDK Streamable HTTP server: a request without a session it knows starts a new one
 * (its transport made with `options`, then given to `connect`, which connects a server to it); `handle`
 * answers a request on its session.
 */
export function sdkSessions(
  options: Omit<StreamableHTTPServerTransportOptions, "sessionIdGenerator" | "onsessioninitialized">,
  connect: (transport: StreamableHTTPServerTransport) => Promise<void>,
) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse, parsed?: unknown): Promise<void> => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        ...options,
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      await connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, parsed);
  };
  return { sessions, handle };
}

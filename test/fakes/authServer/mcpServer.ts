import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface ProtectedMcp {
  readonly url: string;
  readonly authHeaders: string[];
  /** Every request, as `METHOD /path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * A real MCP server (SDK McpServer over Streamable HTTP on node:http) that only answers requests with
 * a bearer token `check` accepts, and publishes RFC 9728 metadata naming `issuer`. With `keyHeader`
 * (`x-api-key`) the token is that header's whole value instead, as API-key servers take it.
 * `metadataFields` replace the document's (`authorization_servers: []`, or `undefined` to leave it out);
 * `challenge` gives parameters the 401's Bearer challenge adds for the token it refused (`error=…`).
 */
export async function startProtectedMcp(
  issuer: () => string,
  check: (token: string, resource: string) => Promise<boolean>,
  keyHeader?: string,
  options: {
    readonly metadataFields?: Record<string, unknown>;
    readonly challenge?: (token: string | undefined) => string;
  } = {},
): Promise<ProtectedMcp> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const authHeaders: string[] = [];
  const requests: string[] = [];
  let base = "";
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", base);
    requests.push(`${req.method} ${url.pathname}`);
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          resource: `${base}/mcp`,
          authorization_servers: [issuer()],
          scopes_supported: ["mcp"],
          ...options.metadataFields,
        }),
      );
      return;
    }
    const header = String(req.headers[keyHeader ?? "authorization"] ?? "");
    authHeaders.push(header);
    const token = keyHeader === undefined ? /^Bearer (.+)$/.exec(header)?.[1] : header || undefined;
    if (token === undefined || !(await check(token, `${base}/mcp`))) {
      res
        .writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"${options.challenge === undefined ? "" : `, ${options.challenge(token)}`}`,
        })
        .end();
      return;
    }
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          transports.set(id, transport as StreamableHTTPServerTransport);
        },
      });
      const mcp = new McpServer({ name: "protected", version: "1.0.0" });
      mcp.registerTool("whoami", { description: "says hello" }, async () => ({
        content: [{ type: "text", text: "hello alice" }],
      }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    authHeaders,
    requests,
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

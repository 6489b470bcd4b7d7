import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/** A loopback Streamable HTTP MCP server, stateless, answering each POST with one JSON body. */
export interface StatelessJsonMcp {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a fresh server from `build` for each POST, as stateless and Python `json_response` servers do. */
export async function serveStatelessJsonMcp(build: () => McpServer): Promise<StatelessJsonMcp> {
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const transport = new StreamableHTTPServerTransport({
      enableJsonResponse: true,
    } as ConstructorParameters<typeof StreamableHTTPServerTransport>[0]);
    await build().connect(transport);
    await transport.handleRequest(req, res, text === "" ? undefined : JSON.parse(text));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

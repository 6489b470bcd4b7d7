import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { inexactNumberIn, parseKeepingNumbers } from "../../streams/jsonNumbers/inexact.js";

/** The MCP server for one authorized request, or a refusal. */
export type Authorize = (runKey: string, authorization: string | undefined) => McpServer | undefined;

export interface HttpHost {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/** A request body the endpoint reads at the least (a tool's arguments). */
export const MIN_BODY_BYTES = 4 * 1024 * 1024;
const PATH = /^\/mcp\/([0-9a-f]{32})$/;

function jsonRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
) {
  res
    .writeHead(status, { "content-type": "application/json", ...headers })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage, maxBody: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBody) throw new RangeError("too large");
    chunks.push(chunk);
  }
  return parseKeepingNumbers(Buffer.concat(chunks).toString("utf8"));
}

/**
 * The `_meta` key of a `tools/call` whose arguments hold a number a double does not hold (an id past 2^53,
 * `1e400`): that number as the client wrote it. The SDK's server reads the body as JavaScript numbers, and the
 * tool would get the neighbouring one (another id); the run's server refuses the call naming it. Set by svc
 * alone: one a client sent is dropped.
 */
export const INEXACT_NUMBER_META = "svc/inexact-number";

/** Marks each `tools/call` of `body` (one message or a batch) whose arguments hold such a number. */
function markInexactArguments(body: unknown): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    const params = (message as { method?: unknown; params?: unknown } | null)?.params;
    if (
      (message as { method?: unknown }).method !== "tools/call" ||
      params === null ||
      typeof params !== "object"
    )
      continue;
    const call = params as { arguments?: unknown; _meta?: unknown };
    const meta = call._meta !== null && typeof call._meta === "object" ? { ...call._meta } : undefined;
    if (meta !== undefined) delete (meta as Record<string, unknown>)[INEXACT_NUMBER_META];
    const number = inexactNumberIn(call.arguments);
    if (number === undefined && meta === undefined) continue;
    call._meta = number === undefined ? meta : { ...meta, [INEXACT_NUMBER_META]: number };
  }
}

/** Names a local client reaches the endpoint by; a web page's (a rebound DNS name) is none of them. */
const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Why a request is not from a local client but from a web page, or undefined: an `Origin` other than the
 * endpoint's own (browsers send one, local MCP clients do not), or a `Host` that is not a loopback name,
 * as a page reaching 127.0.0.1 through a rebound DNS name sends. MCP's Streamable HTTP transport requires
 * servers to refuse them with 403.
 */
function fromWebPage(req: IncomingMessage, port: number, names: ReadonlySet<string>): string | undefined {
  const hostname = /^(\[[^\]]*\]|[^:]*)(:\d+)?$/.exec(req.headers.host ?? "")?.[1]?.toLowerCase();
  if (hostname === undefined || !names.has(hostname)) return "Forbidden: invalid Host header";
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  try {
    const url = new URL(origin);
    if (url.protocol === "http:" && names.has(url.hostname) && url.port === String(port)) return undefined;
  } catch {
    // `null` (a sandboxed page, a file), or no origin at all.
  }
  return "Forbidden: invalid Origin header";
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  authorize: Authorize,
  port: number,
  names: ReadonlySet<string>,
  maxBody: number,
): Promise<void> {
  const forbidden = fromWebPage(req, port, names);
  if (forbidden !== undefined) return jsonRpcError(res, 403, forbidden);
  const key = PATH.exec(new URL(req.url ?? "/", "http://x").pathname)?.[1];
  if (key === undefined) return jsonRpcError(res, 404, "Not found");
  const server = authorize(key, req.headers.authorization);
  if (server === undefined) {
    return jsonRpcError(res, 401, "Unauthorized: a valid bearer token for this run is required", {
      "www-authenticate": 'Bearer realm="svc"',
    });
  }
  // Stateless Streamable HTTP: every POST is answered by a fresh transport; there is no GET stream.
  if (req.method !== "POST") return jsonRpcError(res, 405, "Method not allowed", { allow: "POST" });
  let body: unknown;
  try {
    body = await readJson(req, maxBody);
  } catch (err) {
    // Not JSON: JSON-RPC's -32700 Parse error, as the SDK's own server transport answers it.
    if (!(err instanceof RangeError)) return jsonRpcError(res, 400, "Parse error: Invalid JSON", {}, -32700);
    return jsonRpcError(res, 413, `Body too large: more than ${maxBody} bytes`);
  }
  markInexactArguments(body);
  // No sessionIdGenerator: stateless mode.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/**
 * The body a call must be let send: a `file_write` of `fileMaxBytes` (which the tool accepts) as JSON, where
 * an escaped character (`\\`, `\"`, a control character's `\u0001`) takes up to 6 bytes.
 */
export const bodyBytesFor = (fileMaxBytes: number): number =>
  Math.max(MIN_BODY_BYTES, fileMaxBytes * 6 + 64 * 1024);

/**
 * A node:http server on 127.0.0.1 (port 0) that serves `/mcp/<run key>` to authorized requests only, reading
 * request bodies of at most `maxBody()` bytes (asked per request: the tools' settings may be reloaded).
 */
export async function startHttpHost(
  authorize: Authorize,
  host = "127.0.0.1",
  maxBody: () => number = () => MIN_BODY_BYTES,
): Promise<HttpHost> {
  const names = new Set([...LOOPBACK_NAMES, host.includes(":") ? `[${host}]` : host]);
  const server: Server = createServer((req, res) => {
    handle(req, res, authorize, (server.address() as AddressInfo).port, names, maxBody()).catch(() => {
      if (!res.headersSent) jsonRpcError(res, 500, "Internal error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";

/**
 * What a connect given up (`connect_timeout`, or `svc mcp list`'s `--timeout`, named in `given`) adds when
 * the server answered nothing svc could read before that: which request went unanswered, what to check for
 * its transport, and the wait to raise — in the form of the tools/list stage's message (`noToolList`).
 */

/** The wait that ran out is the one to raise. */
function bound(given: string): "--timeout" | "connect_timeout" {
  return given.includes("(--timeout)") ? "--timeout" : "connect_timeout";
}

/** The server answered the handshake but not the `tools/list` after it. */
export function noToolList(given: string): string {
  return `the server answered the handshake but not tools/list, the listing of its tools (a fault of the server, or a list slow to build: raise ${bound(given)})`;
}

const CHECK = {
  stdio:
    "check that command and args start an MCP server that speaks stdio, JSON-RPC on its stdin and stdout",
  http: "check that url is the endpoint of an MCP server that speaks Streamable HTTP, not legacy SSE (for that, set transport: sse)",
  sse: "check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http)",
} as const;

/** How far the connect got before it was given up. */
export interface ConnectReached {
  /** The handshake's transport was started: past a url's preflight. */
  readonly handshakeSent: boolean;
  /** An SSE server's event stream opened (its GET answered): only then is the handshake's request sent. */
  readonly streamOpened: boolean;
}

/**
 * The server did not answer the handshake, or, for a url, not even the preflight's HEAD or GET before it
 * (with a short `connect_timeout` that is where the time ran out), or for an SSE server, the GET that opens
 * its event stream: the handshake's request is sent only on a stream that opened and named its endpoint.
 */
export function noAnswer(
  entry: Pick<McpServerEntry, "command" | "transport" | "protocol">,
  given: string,
  reached: ConnectReached,
): string {
  const kind = transportKind(entry as McpServerEntry);
  const request = entry.protocol === "stateless" ? "server/discover" : "initialize";
  // The preflight probes an SSE stream with GET only (docs/mcp.md, Preflight).
  const probe = kind === "sse" ? "GET" : "HEAD or GET";
  const what = !reached.handshakeSent
    ? `the server did not answer the ${probe} of its url that svc sends before the handshake`
    : kind === "sse" && !reached.streamOpened
      ? `the event stream did not open: the server did not answer the GET of its url that opens it (so the handshake, ${request}, was never sent)`
      : `the server did not answer the handshake (${request}, MCP's first request)`;
  return `${what}: ${CHECK[kind]} — or, for a server slow to start, raise ${bound(given)}`;
}

import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { childEnvironment } from "./childEnv.js";
import { answerDroppedStreams } from "./droppedStreams.js";
import { StdioTransport } from "./stdioTransport.js";

/** A stderr line longer than this is cut (a process that never writes a newline). */
const MAX_STDERR_LINE = 64 * 1024;

export interface TransportOptions {
  /** OAuth (issue 6) plugs in here; both HTTP transports take it. */
  readonly authProvider?: OAuthClientProvider;
  /** The TLS-aware fetch of the entry (ssl_verify, client certificates). */
  readonly fetch?: FetchLike;
  /** Receives each stderr line of a stdio server. */
  readonly onStderr?: (line: string) => void;
  /** A stdio server process exited: `code 3` or `signal SIGKILL`. */
  readonly onExit?: (how: string) => void;
  /** svc closed a stdio connection because the server broke the protocol (a message over the limit). */
  readonly onProtocolError?: (reason: string) => void;
  readonly parentEnv?: NodeJS.ProcessEnv;
}

/** Builds the transport for a rendered entry: stdio, Streamable HTTP, or SSE (`transport: sse`). */
export function createTransport(entry: McpServerEntry, options: TransportOptions = {}): Transport {
  const kind = transportKind(entry);
  if (kind === "stdio") {
    const transport = new StdioTransport({
      command: entry.command as string,
      args: entry.args,
      // The SDK's transport put its defaults (HOME, PATH, USER, ... of this process) under the entry's.
      env: { ...getDefaultEnvironment(), ...childEnvironment(entry.env, options.parentEnv) },
      ...(options.onExit === undefined ? {} : { onExit: options.onExit }),
      ...(options.onProtocolError === undefined ? {} : { onProtocolError: options.onProtocolError }),
    });
    const onStderr = options.onStderr;
    let pending = "";
    transport.stderr.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      // A process writing on stderr without ever ending a line must not grow this buffer forever.
      if (pending.length > MAX_STDERR_LINE) {
        lines.push(`${pending.slice(0, MAX_STDERR_LINE)}…`);
        pending = "";
      }
      for (const line of lines) if (line.trim() !== "") onStderr?.(line);
    });
    return transport;
  }
  const url = new URL(entry.url as string);
  const requestInit: RequestInit = { headers: entry.headers };
  const common = {
    requestInit,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.authProvider === undefined ? {} : { authProvider: options.authProvider }),
  };
  if (kind === "sse") return new SSEClientTransport(url, common);
  return new StreamableHTTPClientTransport(url, {
    ...common,
    fetch: answerDroppedStreams(options.fetch ?? ((input, init) => fetch(input, init))),
  });
}

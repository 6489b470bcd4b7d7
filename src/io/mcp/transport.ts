import type { ChildProcess } from "node:child_process";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { childEnvironment } from "./childEnv.js";
import { answerDroppedStreams } from "./droppedStreams.js";

export interface TransportOptions {
  /** OAuth (issue 6) plugs in here; both HTTP transports take it. */
  readonly authProvider?: OAuthClientProvider;
  /** The TLS-aware fetch of the entry (ssl_verify, client certificates). */
  readonly fetch?: FetchLike;
  /** Receives each stderr line of a stdio server. */
  readonly onStderr?: (line: string) => void;
  /** A stdio server process exited: `code 3` or `signal SIGKILL`. */
  readonly onExit?: (how: string) => void;
  readonly parentEnv?: NodeJS.ProcessEnv;
}

/** Builds the transport for a rendered entry: stdio, Streamable HTTP, or SSE (`transport: sse`). */
export function createTransport(entry: McpServerEntry, options: TransportOptions = {}): Transport {
  const kind = transportKind(entry);
  if (kind === "stdio") {
    const transport = new StdioClientTransport({
      command: entry.command as string,
      args: entry.args,
      env: childEnvironment(entry.env, options.parentEnv),
      stderr: "pipe",
    });
    const onStderr = options.onStderr;
    let pending = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") onStderr?.(line);
    });
    const onExit = options.onExit;
    if (onExit !== undefined) {
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        // The SDK keeps the child private; its exit code is what tells "crashed" from "closed stdout".
        const child = (transport as unknown as { _process?: ChildProcess })._process;
        child?.once("exit", (code, signal) => onExit(signal === null ? `code ${code}` : `signal ${signal}`));
      };
    }
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

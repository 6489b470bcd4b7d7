import type { HttpHost } from "../../io/mcpEndpoint/httpHost.js";
import type { AgentTool, ToolContext } from "../tools/tool.js";
import type { UnofferedTools } from "../unofferedTools.js";
import { RunRegistry } from "./runRegistry.js";
import type { toolServer } from "./toolServer.js";

/** What a command agent gets: `SVC_MCP_URL` and `SVC_MCP_TOKEN`, valid until `close()`. */
export interface RunEndpoint {
  readonly url: string;
  readonly token: string;
  /** Invalidates the token and ends the run's calls still running. */
  close(): void;
}

export interface McpEndpointHost {
  /**
   * An endpoint exposing exactly `tools`, run with `context`, for one run. `unoffered` says why a call
   * names a tool the run was not offered (its MCP server was not connected when the run began,
   * `unofferedServerTools`); undefined for a name it knows nothing of, which gets "unknown tool".
   */
  openRunEndpoint(
    tools: readonly AgentTool[],
    context: ToolContext,
    unoffered?: UnofferedTools,
  ): Promise<RunEndpoint>;
  /** Closes every run's endpoint and the listening socket. */
  close(): Promise<void>;
}

/**
 * One loopback Streamable HTTP MCP endpoint for the gateway, with a path and bearer token per run
 * (docs/agent-tools.md). The socket is opened, and the MCP server SDK loaded, on the first run that needs it.
 */
export function createMcpEndpointHost(
  options: {
    readonly host?: string;
    /** `tools.file.max_bytes` (read per request: a reload may change it); default 1 MiB. */
    readonly fileMaxBytes?: () => number;
  } = {},
): McpEndpointHost {
  const runs = new RunRegistry();
  let listening: Promise<HttpHost> | undefined;
  let serve: typeof toolServer | undefined;
  const authorize = (key: string, authorization: string | undefined) => {
    const run = runs.authorize(key, authorization);
    return run === undefined || serve === undefined
      ? undefined
      : serve(run.tools, run.context, run.signal, run.calls, run.unoffered);
  };
  return {
    async openRunEndpoint(tools, context, unoffered) {
      listening ??= Promise.all([import("./toolServer.js"), import("../../io/mcpEndpoint/httpHost.js")]).then(
        ([server, host]) => {
          serve = server.toolServer;
          return host.startHttpHost(authorize, options.host, () =>
            host.bodyBytesFor(options.fileMaxBytes?.() ?? 1024 * 1024),
          );
        },
      );
      const http = await listening;
      const run = runs.open(tools, context, unoffered);
      return { url: `${http.origin}/mcp/${run.key}`, token: run.token, close: run.close };
    },
    async close() {
      runs.closeAll();
      const http = await listening?.catch(() => undefined);
      listening = undefined;
      await http?.close();
    },
  };
}

import { sanitize } from "../actors/mcp/toolNames.js";
import type { McpToolSource } from "./mcpTools.js";
import type { AgentTool } from "./tools/tool.js";

/** Why a call names a tool the run was not offered; undefined for a name it knows nothing of. */
export type UnofferedTools = (name: string) => string | undefined;

/** Why a server was not connected when the run's tools were chosen, as its status said then. */
function whyThen(status: { readonly state: string; readonly lastError?: string }): string {
  if (status.state === "stopped") return "a reload that changed its entry was connecting it again";
  return status.lastError ?? `still ${status.state}`;
}

/**
 * Why a call names no offered tool, when its name is one an MCP server of the run's selection would register
 * (`mcp__<server>__…`) and that server had none of its tools offered to the run: it was not connected when the
 * run began (an `auth: oauth` server nobody has logged in to, a server whose connect fails). The server's last
 * error is quoted, since it says what to do (`notes: not logged in — run svc mcp login notes`).
 * Undefined for any other name, which keeps the AI SDK's answer listing the tools there are. Made when the run's
 * tools are chosen, from the servers the run selected and the tools it was offered: the reason is the server's
 * state then, and a call made once the server has connected (or a reload has removed it) says that too.
 */
export function unofferedServerTools(
  hub: McpToolSource | undefined,
  selected: readonly string[],
  offered: readonly AgentTool[],
): UnofferedTools {
  if (hub === undefined || selected.length === 0) return () => undefined;
  const offeredNames = new Set(offered.map((tool) => tool.name));
  const withTools = new Set(hub.tools().flatMap((t) => (offeredNames.has(t.name) ? [t.server] : [])));
  const prefix = (server: string) => `mcp__${sanitize(server)}__`;
  // Connected servers that offer no tool (none listed, or all filtered out) are no such case: only those
  // whose connect failed or had not ended when the run began (`stopped`: a reload that changed the server's
  // entry was replacing its connection).
  const down = new Map(
    hub
      .status()
      .filter((s) => s.state === "failed" || s.state === "connecting" || s.state === "stopped")
      .map((s) => [s.name, s] as const),
  );
  const unoffered = selected.filter((server) => !withTools.has(server) && down.has(server));
  if (unoffered.length === 0) return () => undefined;
  return (name) => {
    // The longest prefix decides: `mcp__a__b__x` may be server `a`'s tool `b__x` or server `a__b`'s `x`.
    const [longest] = [...withTools, ...unoffered]
      .filter((server) => name.startsWith(prefix(server)))
      .sort((a, b) => prefix(b).length - prefix(a).length);
    if (longest === undefined || withTools.has(longest)) return undefined;
    const then = down.get(longest) as { readonly state: string; readonly lastError?: string };
    const now = hub.status().find((s) => s.name === longest);
    const why =
      now === undefined
        ? `${whyThen(then)}; a reload has removed it from mcp_servers since`
        : now.state === "connected"
          ? `${then.state === "connecting" ? "it was still connecting then" : whyThen(then)}; it has connected since, and the next run is offered its tools`
          : whyThen(then);
    return `mcp_servers.${longest} was not connected when this run began (${why}), so the run was not offered its tools; "${name}" was not run`;
  };
}

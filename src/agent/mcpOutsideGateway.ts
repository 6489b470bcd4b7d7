import { sanitize } from "../actors/mcp/toolNames.js";
import type { UnofferedTools } from "./unofferedTools.js";

/**
 * Why a `svc cron run` run was not offered a tool of an enabled MCP server (`servers`): it connects none,
 * those connections are the gateway's, and the job's runs there get the tools. Undefined for a name no such
 * server would register (`mcp__<server>__…`), which stays an unknown tool.
 */
export function mcpToolsOutsideGateway(servers: readonly string[]): UnofferedTools {
  const prefix = (server: string) => `mcp__${sanitize(server)}__`;
  return (name) => {
    // The longest prefix decides: `mcp__a__b__x` may be server `a`'s tool `b__x` or server `a__b`'s `x`.
    const [server] = servers
      .filter((s) => name.startsWith(prefix(s)))
      .sort((a, b) => prefix(b).length - prefix(a).length);
    if (server === undefined) return undefined;
    return `mcp_servers.${server}'s tools are not offered to svc cron run, which connects no MCP server (the connections are the gateway's): the job's runs in the gateway get them, on its schedule or fired by a cron_job route; "${name}" was not run`;
  };
}

import type { McpServers } from "../../config/sections/mcp.js";
import { serverEntries, serverNames } from "../../config/serverOrder.js";

/**
 * Why `svc mcp login|reauth <name>` cannot log in to `name`, worded after `mcp_servers.<name>: `, or
 * undefined when it can (an enabled url server with `auth: oauth`). Each case says what to change.
 */
export function oauthTargetProblem(servers: McpServers, name: string): string | undefined {
  if (!Object.hasOwn(servers, name)) {
    const known = serverNames(servers);
    return `no MCP server by that name (${known.length === 0 ? "mcp_servers is empty" : `known: ${known.join(", ")}`})`;
  }
  const entry = servers[name];
  if (entry === undefined) return undefined;
  if (entry.command !== undefined)
    return "is a command (stdio) server: OAuth logins are for url servers with auth: oauth";
  if (entry.auth !== "oauth")
    return "has no auth: oauth — add auth: oauth to the entry to log in with OAuth (without it svc sends the entry's headers)";
  if (!entry.enabled) return "is disabled (enabled: false) — set enabled: true to log in";
  return undefined;
}

/**
 * Why `svc mcp reauth --all` has nothing to do, worded after `<config.yaml>: `: no entry has `auth: oauth`,
 * or the ones that have it are disabled (named, with the fix), which "none configured" would hide.
 */
export function noOauthServersProblem(servers: McpServers): string {
  const disabled = serverEntries(servers)
    .filter(([, entry]) => entry.auth === "oauth" && entry.command === undefined && !entry.enabled)
    .map(([name]) => name);
  return disabled.length === 0
    ? "no mcp_servers entry has auth: oauth — add auth: oauth to a url server's entry to log in with OAuth"
    : `no enabled mcp_servers entry has auth: oauth (disabled: ${disabled.join(", ")}) — set enabled: true to re-authorize ${disabled.length === 1 ? "it" : "them"}`;
}

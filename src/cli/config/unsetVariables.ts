import { type InterpolationScope, interpolateDeep } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";

/** The `${VAR}` names an MCP server entry uses that neither `.env` nor the environment sets, each once. */
export function unsetMcpVariables(entry: McpServerEntry, scope: InterpolationScope): string[] {
  const unresolved: string[] = [];
  interpolateDeep(entry, scope, unresolved);
  return [...new Set(unresolved)];
}

import { type InterpolationScope, interpolateDeep } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";

/** The `${VAR}` names a value uses (strings anywhere in it) that neither `.env` nor the environment sets, each once. */
function unsetIn(value: unknown, scope: InterpolationScope): string[] {
  const unresolved: string[] = [];
  interpolateDeep(value, scope, unresolved);
  return [...new Set(unresolved)];
}

/** The `${VAR}` names an MCP server entry uses that neither `.env` nor the environment sets, each once. */
export function unsetMcpVariables(entry: McpServerEntry, scope: InterpolationScope): string[] {
  return unsetIn(entry, scope);
}

/**
 * The unset `${VAR}` names of an entry by what a connect does with them: `failing` are those of a remote
 * server's `url` and `headers`, where the connect fails closed; `literal` are the others, which keep their
 * literal text (a stdio server starts with `${X}` in its arguments).
 */
export function unsetMcpVariablesByEffect(
  entry: McpServerEntry,
  scope: InterpolationScope,
): { failing: string[]; literal: string[] } {
  const { url, headers, ...rest } = entry;
  const failing = url === undefined ? [] : unsetIn([url, headers], scope);
  const literal = unsetIn(url === undefined ? entry : rest, scope);
  return { failing, literal: literal.filter((name) => !failing.includes(name)) };
}

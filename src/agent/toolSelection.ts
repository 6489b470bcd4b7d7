import { NO_MCP } from "../actors/agent/runner.js";

export interface ToolSelection {
  /** Names for the built-in toolsets (`web_extract`, `terminal`, ...). */
  readonly builtinToolsets: readonly string[];
  /** MCP servers whose registered tools the run is offered. */
  readonly mcpServers: readonly string[];
}

/**
 * Splits a run's toolsets (docs/agent.md, "Tools in a run"): names of configured MCP servers pick those
 * servers; when none is named every configured server is offered (a disabled one has no tools); `no_mcp`
 * offers none. Every other name is a built-in toolset.
 */
export function selectToolsets(
  toolsets: readonly string[],
  configuredServers: readonly string[],
): ToolSelection {
  const servers = new Set(configuredServers);
  const named = toolsets.filter((name) => servers.has(name));
  const builtinToolsets = toolsets.filter((name) => !servers.has(name) && name !== NO_MCP);
  if (toolsets.includes(NO_MCP)) return { builtinToolsets, mcpServers: [] };
  return { builtinToolsets, mcpServers: named.length > 0 ? named : [...configuredServers] };
}

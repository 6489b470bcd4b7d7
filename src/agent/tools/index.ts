import type { AgentTool } from "./tool.js";

/**
 * The built-in toolsets a run's `toolsets` name (web_extract, web_search, vision_analyze, clarify,
 * terminal, file). Placeholder on this branch: the toolsets themselves are built on the `agenttools`
 * branch, which replaces this file.
 */
export function builtinTools(_toolsets: readonly string[], _settings?: unknown): AgentTool[] {
  return [];
}

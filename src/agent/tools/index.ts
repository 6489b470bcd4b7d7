import type { ToolsSettings } from "../../config/sections/tools.js";
import { clarifyTool } from "./clarify.js";
import { fileTools } from "./file.js";
import { oneAtATime } from "./oneAtATime.js";
import { type TerminalDeps, terminalTool } from "./terminal.js";
import type { AgentTool } from "./tool.js";
import { visionAnalyzeTool } from "./visionAnalyze.js";
import { type WebDeps, webExtractTool } from "./webExtract.js";
import { webSearchTool } from "./webSearch.js";

export { createWorkspace, lazyWorkspace } from "../../io/workspace.js";
export type { AgentTool, JsonSchema, ToolContent, ToolContext, ToolOutcome } from "./tool.js";

export type BuiltinToolDeps = WebDeps & TerminalDeps;

/** The toolset names that are built in (a route's `toolsets` may name them); `web` is both web tools. */
export const BUILTIN_TOOLSETS: ReadonlySet<string> = new Set([
  "web",
  "web_extract",
  "web_search",
  "vision_analyze",
  "clarify",
  "terminal",
  "file",
]);

/**
 * The built-in tools of the toolsets a run may use (`svc-webhook` already expanded by the caller).
 * `web_search` is left out while `tools.web_search` names no backend; `terminal` and `file` come only
 * when named, and their calls run one after another (they share the run's workspace). Each tool appears
 * once, in a fixed order. Called once per run: the queue is the run's.
 */
export function builtinTools(
  toolsets: readonly string[],
  settings: ToolsSettings,
  deps: BuiltinToolDeps = {},
): AgentTool[] {
  const named = new Set(toolsets);
  const has = (name: string) => named.has(name);
  const tools: AgentTool[] = [];
  if (has("web_extract") || has("web")) tools.push(webExtractTool(settings.web, deps));
  if ((has("web_search") || has("web")) && settings.web_search !== undefined) {
    tools.push(webSearchTool(settings.web_search));
  }
  if (has("vision_analyze")) tools.push(visionAnalyzeTool(settings.web, deps));
  if (has("clarify")) tools.push(clarifyTool());
  tools.push(
    ...oneAtATime([
      ...(has("terminal") ? [terminalTool(settings.terminal, deps)] : []),
      ...(has("file") ? fileTools(settings.file) : []),
    ]),
  );
  return tools;
}

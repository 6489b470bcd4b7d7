/**
 * What the agent's tool loop, the built-in toolsets and the per-run MCP endpoint for command agents
 * share: one tool shape, whatever the tool's origin (an MCP server through the hub, or built in).
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A JSON Schema object, passed to the model (and to MCP clients) unchanged. */
export type JsonSchema = { readonly type: "object"; readonly [key: string]: unknown };

/** One piece of a tool's answer, in MCP's content shape so MCP results pass through unchanged. */
export type ToolContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly data: string; readonly mimeType: string };

export type ToolOutcome = (
  | { readonly ok: true; readonly content: readonly ToolContent[] }
  /** The model receives `error` as the tool's result and the run goes on. */
  | { readonly ok: false; readonly error: string }
) & {
  /**
   * An MCP tool's result as its server answered it (every content block, `structuredContent`, `isError`):
   * a command agent's MCP client gets it unchanged, where a model gets `content` / `error`.
   */
  readonly mcpResult?: CallToolResult;
};

/** What a tool knows of the run that calls it. */
export interface ToolContext {
  readonly signal: AbortSignal;
  readonly route: string;
  readonly deliveryId: string;
  readonly profile: string;
  /** True for webhook and cron runs: no one is present to approve a call or answer a question. */
  readonly unattended: boolean;
  /** The run's own working directory under `$SVC_HOME/workspaces/`, created on first use. */
  workspace(): Promise<string>;
  /** Asks the run's model about an image (for `vision_analyze`); absent for runners without a model. */
  analyzeImage?(url: string, question: string, signal: AbortSignal): Promise<string>;
  /** Told by a tool `timedFromSend` when its request goes to its server (each time, for one sent again). */
  sent?(): void;
}

export interface AgentTool {
  /** The name the model calls: `mcp__<server>__<tool>` for MCP tools, the bare name for built-ins. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** An MCP tool's `title`, `annotations` and `outputSchema`, passed on to a command agent's MCP client. */
  readonly title?: string;
  readonly annotations?: Readonly<Record<string, string | boolean>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /**
   * True for a tool whose call is a request to a server (an MCP tool), which may first wait for the server's
   * earlier call, its connect and an approval: the call is timed from when its request is sent
   * (`ToolContext.sent`), and one never sent takes no time.
   */
  readonly timedFromSend?: true;
  execute(args: unknown, context: ToolContext): Promise<ToolOutcome>;
}

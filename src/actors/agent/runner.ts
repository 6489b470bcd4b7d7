import type { RunRecord } from "../../agent/runRecord.js";

/** What a webhook (or cron job) hands the agent. */
export interface AgentRequest {
  readonly route: string;
  readonly event: string;
  readonly deliveryId: string;
  readonly prompt: string;
  /** Contents of the loaded skill (first listed skill found), if any. */
  readonly skill?: { readonly name: string; readonly text: string };
  /**
   * Toolsets for the run (route `toolsets`, else the platform default): built-in toolset names, MCP
   * server names, and `no_mcp` (docs/agent.md, "Tools in a run").
   */
  readonly toolsets: readonly string[];
  readonly profile: string | undefined;
  /** Overrides for one request (MCP sampling: `sampling.model`, the clamped `max_tokens`). */
  readonly model?: string;
  readonly maxTokens?: number;
}

/** A run's answer; model runners add what the run did (`record`), echo and command have none. */
export interface AgentReply {
  readonly text: string;
  readonly record?: RunRecord;
  /** The model's last turn stopped at the output token limit (`max_tokens`): the text is cut short. */
  readonly cutAtMaxTokens?: boolean;
  /**
   * The endpoint's reason when it cut the model's last turn off itself (DeepSeek's
   * `insufficient_system_resource`): the text is cut short, though at no limit of the request's.
   */
  readonly cutByEndpoint?: string;
  /**
   * The model the endpoint says answered (an alias resolved: `gpt-4o` answered by `gpt-4o-2024-08-06`);
   * an MCP sampling result names it. The run record keeps the model asked for.
   */
  readonly answeredBy?: string;
}

/** An agent runner turns a prompt into a reply . */
export interface AgentRunner {
  run(request: AgentRequest, signal: AbortSignal): Promise<AgentReply>;
}

/**
 * A model run that failed (endpoint down, 4xx/5xx after the retries, malformed answer, timeout): the
 * route's target gets a failure notice and the record is journalled.
 */
export class AgentRunFailure extends Error {
  constructor(
    message: string,
    readonly record: RunRecord,
  ) {
    super(message);
    this.name = "AgentRunFailure";
  }
}

/**
 * The reason a run's signal carries when something other than the gateway's stop ended the run (a sampling
 * request past its `sampling.timeout`, or canceled by its server): the run's record and log line say this,
 * not that the gateway stopped.
 */
export class RunEnded extends Error {
  override readonly name = "RunEnded";
}

/** Default webhook toolset (`svc-webhook`). */
export const DEFAULT_WEBHOOK_TOOLSETS = ["web_search", "web_extract", "vision_analyze", "clarify"] as const;

/** In a run's `toolsets`: offer no MCP server's tools. */
export const NO_MCP = "no_mcp";

/** What a webhook (or cron job) hands the agent. */
export interface AgentRequest {
  readonly route: string;
  readonly event: string;
  readonly deliveryId: string;
  readonly prompt: string;
  /** Contents of the loaded skill (first listed skill found), if any. */
  readonly skill?: { readonly name: string; readonly text: string };
  /** Toolsets for the run (route `toolsets`, else the platform default). */
  readonly toolsets: readonly string[];
  readonly profile: string | undefined;
}

/** An agent runner turns a prompt into a reply . */
export interface AgentRunner {
  run(request: AgentRequest, signal: AbortSignal): Promise<string>;
}

/** Default webhook toolset (`svc-webhook`). */
export const DEFAULT_WEBHOOK_TOOLSETS = ["web_search", "web_extract", "vision_analyze", "clarify"] as const;

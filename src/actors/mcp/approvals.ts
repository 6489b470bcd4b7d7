import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../io/log.js";

/** A tool call that needs a yes before it runs (untrusted server, tool without `readOnlyHint: true`). */
export interface ApprovalRequest {
  readonly server: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** A form-mode elicitation from a server. */
export interface ElicitationRequest {
  readonly server: string;
  readonly message: string;
  readonly requestedSchema: ElicitRequestFormParams["requestedSchema"];
}

/** Where approvals and form elicitations go: a terminal prompt in the CLI, a policy in the gateway. */
export interface ApprovalSurface {
  approve(request: ApprovalRequest, signal: AbortSignal): Promise<boolean>;
  elicit(request: ElicitationRequest, signal: AbortSignal): Promise<ElicitResult>;
}

/** Field defaults of a form, or undefined when a required field has none (the form cannot be auto-filled). */
export function formDefaults(
  schema: ElicitationRequest["requestedSchema"],
): Record<string, string | number | boolean | string[]> | undefined {
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    const fallback = (property as { default?: unknown }).default;
    if (fallback !== undefined) content[key] = fallback as string | number | boolean | string[];
  }
  for (const key of schema.required ?? []) if (!(key in content)) return undefined;
  return content;
}

/**
 * The gateway's surface (`gateway.approvals`): `deny` (default) refuses every approval and declines every
 * form; `allow` approves, and accepts a form filled with its defaults (declines when a required field has
 * none). Each decision is logged without the arguments' values.
 */
export function policyApprovals(policy: "deny" | "allow", logger: Logger): ApprovalSurface {
  return {
    async approve(request) {
      const allowed = policy === "allow";
      logger.info(
        { server: request.server, tool: request.tool, decision: allowed ? "allow" : "deny", policy },
        `[mcp] approval for ${request.server}/${request.tool}: ${allowed ? "allowed" : "denied"} by gateway.approvals`,
      );
      return allowed;
    },
    async elicit(request) {
      const content = policy === "allow" ? formDefaults(request.requestedSchema) : undefined;
      const action = content === undefined ? "decline" : "accept";
      logger.info(
        { server: request.server, decision: action, policy },
        `[mcp] elicitation from ${request.server}: ${action} by gateway.approvals`,
      );
      return content === undefined ? { action: "decline" } : { action: "accept", content };
    },
  };
}

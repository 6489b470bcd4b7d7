import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../io/log.js";
import { allowedValues, answerProblem, type CheckedField, type ChoiceField } from "./formAnswer.js";

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
  /** True when a person answers right now (a terminal); absent or false: nobody (the gateway, a script). */
  readonly attended?: () => boolean;
  /** Tells the user of a decision taken without asking them (the CLI writes it on stderr). */
  readonly notice?: (text: string) => void;
  approve(request: ApprovalRequest, signal: AbortSignal): Promise<boolean>;
  elicit(request: ElicitationRequest, signal: AbortSignal): Promise<ElicitResult>;
}

type FieldValue = string | number | boolean | string[];

/** What a form's defaults answer: accept with them, or decline naming the required fields that have none. */
export type DefaultsAnswer =
  | { readonly action: "accept"; readonly content: Record<string, FieldValue> }
  | { readonly action: "decline"; readonly missing: readonly string[] };

/**
 * A form answered with its fields' schema `default`s: accepted when every required field has one (fields
 * without a default are left out), declined otherwise. A default the field's own schema does not allow
 * (outside `minimum`/`maximum`, none of the choices, ...) counts as none: the server never gets a value
 * its form refuses; a required field with one is named with the reason.
 */
export function defaultsAnswer(schema: ElicitationRequest["requestedSchema"]): DefaultsAnswer {
  const content: Record<string, FieldValue> = {};
  const refused = new Map<string, string>();
  for (const [key, property] of Object.entries(schema.properties)) {
    const fallback = (property as { default?: unknown }).default as FieldValue | undefined;
    if (fallback === undefined) continue;
    const field = property as CheckedField & ChoiceField;
    const problem = answerProblem(field, fallback, allowedValues(field));
    if (problem === undefined) content[key] = fallback;
    else refused.set(key, `${key} (its default ${JSON.stringify(fallback)}: ${problem})`);
  }
  const missing = (schema.required ?? [])
    .filter((key) => !Object.hasOwn(content, key))
    .map((key) => refused.get(key) ?? key);
  return missing.length === 0 ? { action: "accept", content } : { action: "decline", missing };
}

/** Field defaults of a form, or undefined when a required field has none (the form cannot be auto-filled). */
export function formDefaults(
  schema: ElicitationRequest["requestedSchema"],
): Record<string, FieldValue> | undefined {
  const answer = defaultsAnswer(schema);
  return answer.action === "accept" ? answer.content : undefined;
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

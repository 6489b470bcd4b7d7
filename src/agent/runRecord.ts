/** What one model run records (docs/agent.md, "What a run records"): plain data, journalled as JSON. */

import { MAX_TURN_CONTINUATIONS, type PausedTurnEnd } from "./pausedTurns.js";
import type { ServerWithoutTools } from "./serversWithoutTools.js";
import type { ToolResultCut } from "./toolResultCap.js";

export interface ToolCallRecord {
  /** The name the model called (`mcp__<server>__<tool>` or a built-in's name). */
  readonly name: string;
  readonly ms: number;
  readonly ok: boolean;
  /** Why the call failed (refused, unknown tool, invalid arguments, the tool's own error). */
  readonly error?: string;
  /** Set when the call's text was longer than `agent.max_tool_result_chars`: its length, and how much the model got. */
  readonly cut?: ToolResultCut;
}

export type RunOutcome = "ok" | "max_steps" | "error" | "aborted";

/** Recorded for a call the model asked for on its last allowed turn. */
export const NOT_RUN_AT_MAX_STEPS =
  "not run: the model asked for it on its last allowed turn (agent.max_steps)";

export interface RunRecord {
  readonly provider: string;
  readonly model: string;
  /** Model turns taken. */
  readonly steps: number;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly usage: { readonly input: number; readonly output: number };
  readonly outcome: RunOutcome;
  /** The failure, for `error` and `aborted`. */
  readonly error?: string;
  /**
   * Set when the reply is the text of a last turn cut short, delivered as it is: at `agent.max_tokens`, at
   * the end of the model's context window (the Messages API's `model_context_window_exceeded`), or still
   * paused by the Messages API after as many continuations as svc sends, or with content it cannot send back
   * for another (`pause_turn`), or cut off by the endpoint itself for want of its resources (`endpoint`:
   * DeepSeek's `insufficient_system_resource`).
   */
  readonly cut?: "max_tokens" | "context_window" | "pause_turn" | "endpoint";
  /**
   * With `cut: "max_tokens"`: `model_length` when the endpoint's reason was Mistral's, which may be
   * `agent.max_tokens` or the end of the model's context window (the reason does not say which); `cut` stays
   * `max_tokens` for readers that know only that. With `cut: "endpoint"`: the endpoint's finish reason
   * (`insufficient_system_resource`).
   */
  readonly cutReason?: string;
  /** With `cut: "pause_turn"`: the continuations sent, and what ended them first (`PausedTurnEnd`). */
  readonly paused?: PausedTurnEnd;
  /**
   * The MCP servers the run selected and went on without, offered none of their tools: still connecting
   * when its wait ended, or failed or reconnecting with none registered (their errors scrubbed).
   */
  readonly mcpUnavailable?: readonly ServerWithoutTools[];
  readonly ms: number;
}

/** Where a reply delivered as it is was cut, for the run's line. */
const CUT_AT: Readonly<Record<Exclude<RunRecord["cut"], "pause_turn" | "endpoint" | undefined>, string>> = {
  max_tokens: "at agent.max_tokens",
  context_window: "at the end of the model's context window",
};

/** Where a reply cut at Mistral's `model_length` was cut (`cutReason`), for the run's line. */
const CUT_AT_MODEL_LENGTH =
  "at agent.max_tokens or at the end of the model's context window (finish_reason model_length)";

/** Where a reply the endpoint cut off itself was cut (`cut: "endpoint"`, its reason in `cutReason`), for the run's line. */
const cutByEndpoint = (reason: string | undefined): string =>
  `by the endpoint (finish_reason ${reason ?? "unknown"})`;

/** How a paused turn's reply was cut short, for the run's line (a record without `paused`: at svc's limit). */
function pausedCut(paused: PausedTurnEnd | undefined): string {
  const n = paused?.continuations ?? MAX_TURN_CONTINUATIONS;
  const after = n === 0 ? "before any continuation" : `after ${n} continuation${n === 1 ? "" : "s"}`;
  if (paused?.unsent === undefined) return `short: the Messages API still paused the turn ${after}`;
  const what =
    paused.unsent.length === 0
      ? "with no content"
      : `with content svc cannot send back (${paused.unsent.join(", ")})`;
  return `short: the Messages API paused the turn ${what} ${after}`;
}

/** The one INFO line a model run logs (the key and the prompt never appear in it). */
export function runLogLine(
  route: string,
  deliveryId: string,
  record: RunRecord,
  /** The model as the line names it, when not as the record holds it (one a `${VAR}` gave). */
  model: string = record.model,
): string {
  const calls = record.toolCalls
    .map(
      (c) =>
        `${c.name} ${c.ok ? "ok" : c.error === NOT_RUN_AT_MAX_STEPS ? "not run" : "error"} ${c.ms}ms${c.cut ? ` (cut to ${c.cut.shown} of ${c.cut.chars} chars)` : ""}`,
    )
    .join(", ");
  const cut =
    record.cut === undefined
      ? ""
      : ` (reply cut ${record.cut === "pause_turn" ? pausedCut(record.paused) : record.cut === "endpoint" ? cutByEndpoint(record.cutReason) : record.cut === "max_tokens" && record.cutReason === "model_length" ? CUT_AT_MODEL_LENGTH : CUT_AT[record.cut]})`;
  const outcome =
    record.outcome === "ok" ? `ok${cut}` : `${record.outcome}${record.error ? ` (${record.error})` : cut}`;
  return `[agent] ${route} ${deliveryId}: ${outcome} — ${record.provider}/${model}, ${record.steps} step${record.steps === 1 ? "" : "s"}, ${record.toolCalls.length} tool call${record.toolCalls.length === 1 ? "" : "s"}${calls ? ` (${calls})` : ""}, tokens in ${record.usage.input} out ${record.usage.output}, ${record.ms}ms`;
}

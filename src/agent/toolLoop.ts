import { generateText, stepCountIs, type ToolSet, wrapLanguageModel } from "ai";
import { keptFinishReason, MISTRAL_LENGTH } from "./chatAnswer.js";
import { endpointCutReason } from "./endpointCut.js";
import { PAUSED_TURN, type PausedTurnEnd, pausedTurnsMiddleware } from "./pausedTurns.js";
import type { ProviderModel } from "./retry.js";
import { promptToChange, samplingServerOf } from "./runPrompt.js";
import type { ToolCallLog } from "./sdkTools.js";
import {
  heldOnlyThinking,
  REASONING_ONLY_FAILURE,
  THINKING_ONLY_FAILURE,
  unfinishedThinkingFailure,
} from "./thinkText.js";
import { toolCallsFinishMiddleware, uniqueToolCallIdsMiddleware } from "./toolCallIds.js";
import { unreadableArgumentsMiddleware } from "./toolCallInputs.js";
import { toolErrorText } from "./toolCallNames.js";
import { recordedToolErrorsMiddleware, unofferedToolsMiddleware } from "./toolErrorResults.js";
import { cutToolText } from "./toolResultCap.js";

export interface ToolLoopInput {
  readonly model: ProviderModel;
  readonly system?: string | undefined;
  readonly prompt: string;
  readonly tools: ToolSet;
  readonly maxSteps: number;
  readonly maxTokens: number;
  readonly signal: AbortSignal;
  readonly log: ToolCallLog;
  /**
   * Why a call names no offered tool, for a name the run could not be offered (`unofferedServerTools`: its MCP
   * server was not connected); undefined keeps the AI SDK's own answer.
   */
  readonly unoffered?: (name: string) => string | undefined;
  /**
   * `agent.max_tool_result_chars`, for the errors of calls no tool ran (an unknown tool, arguments that are
   * not JSON), which quote what the model wrote; 0 or unset: no cap.
   */
  readonly maxResultChars?: number;
}

/** What a loop got through, kept up to date step by step so a failed run still reports it. */
export interface LoopProgress {
  steps: number;
  inputTokens: number;
  outputTokens: number;
}

export interface LoopResult {
  readonly text: string;
  /** The last turn still asked for tools: the loop stopped at `maxSteps`, not at an answer. */
  readonly stoppedAtMaxSteps: boolean;
  /** The last turn stopped at the output token limit (`finish_reason: length`, `stop_reason: max_tokens`). */
  readonly cutAtMaxTokens: boolean;
  /**
   * Set when that cut was the model's context window, not `max_tokens`: the Messages API ends such a turn with
   * `stop_reason: model_context_window_exceeded` (the SDK reports it as `length` too), so a larger `max_tokens`
   * would not help.
   */
  readonly cutAtContextWindow?: true;
  /**
   * Set when the cut was Mistral's `finish_reason: model_length`, which may be `max_tokens` or the model's
   * context window: what the run says of it names both (`cutAtEither`).
   */
  readonly cutAtModelLength?: true;
  /**
   * The endpoint's own reason when it cut the last turn off for want of its resources (DeepSeek's
   * `finish_reason: insufficient_system_resource`, `endpointCutReason`): a text it wrote is cut short, as at a limit.
   */
  readonly cutByEndpoint?: string;
  /**
   * The last turn was still paused (`pause_turn`): after every continuation svc sends, or after those it
   * sent before the paused content was none it can send back (`unsent`).
   */
  readonly stillPaused?: PausedTurnEnd;
  /**
   * Tool calls of a last turn cut at the output token limit, or cut off by the endpoint itself
   * (`cutByEndpoint`): the AI SDK runs no tool of such a turn (their arguments may be cut short) and ends the
   * loop, so the run asked for tools and got none. Recorded as not run.
   */
  readonly cutToolCalls: number;
  /**
   * Set when the last turn was stopped by the endpoint's safety system (Chat Completions' `finish_reason:
   * content_filter`, the Messages API's `stop_reason: refusal`): the raw finish reason as the endpoint sent it.
   * An OpenAI `refusal` the model wrote (finish reason `stop`, which the AI SDK also calls `content-filter`)
   * is a whole answer and is delivered as the reply.
   */
  readonly filtered?: { readonly reason: string | undefined };
  /**
   * The last turn finished, calling no tools, with only the model's thinking and no text (`heldOnlyItsThinking`):
   * thinking its text held (`<think>…</think>`, or the text up to a `</think>` line), taken apart, or reasoning
   * the server sent apart, which says which (`ThinkingOnly`). It has no reply.
   */
  readonly thinkingOnly?: ThinkingOnly;
  /** The model the endpoint says wrote the last turn (its answer's `model`; else the one asked for). */
  readonly modelId: string;
}

/** Recorded for each call of a turn cut at the output token limit. */
export const NOT_RUN_CUT =
  "not run: the model's answer was cut at agent.max_tokens while it asked for this call (its arguments may be incomplete)";

/** Recorded for each call of a turn cut at Mistral's `model_length`: `max_tokens` or the context window's end. */
export const NOT_RUN_CUT_EITHER =
  "not run: the model's answer was cut at agent.max_tokens or at the end of its context window (finish_reason model_length) while it asked for this call (its arguments may be incomplete)";

/** Recorded for each call of a turn the endpoint cut off itself (`endpointCutReason`), naming its reason. */
export const notRunCutByEndpoint = (reason: string): string =>
  `not run: the endpoint cut the model's answer off (finish_reason ${reason}) while it asked for this call (its arguments may be incomplete)`;

/** Recorded for each call of a turn cut at the end of the model's context window. */
export const NOT_RUN_CUT_CONTEXT =
  "not run: the model's answer was cut at the end of its context window while it asked for this call (its arguments may be incomplete)";

/** What the answer a content filter stopped or the model refused was for, to say what to change. */
export interface FilteredAnswerOf {
  /**
   * The run's route (`cron:<job>` for a cron job's run, `mcp:<server>` for a sampling request's): the prompt
   * to change is named after it.
   */
  readonly route?: string;
  /** The key the model came from: `agent.model` (the default), or a sampling request's `sampling.model`. */
  readonly modelKey?: string;
  /** The answer was `vision_analyze`'s about an image: the image or the question set it off, not the run's prompt. */
  readonly image?: true;
  /** The model as the advice quotes it (`quotedModel`): config.yaml's text for one a `${VAR}` gave. */
  readonly quoted?: string;
}

/**
 * Why a run whose last turn the endpoint's safety system stopped fails: its text (none, or an answer cut
 * short where the filter struck) is no reply to deliver as if the run had finished. `reason` is the raw
 * finish reason (`content_filter`, `refusal`). For `vision_analyze`'s answer, why the tool call fails.
 */
export function contentFilterFailure(
  provider: "openai" | "anthropic",
  reason: string | undefined,
  model: string,
  of: FilteredAnswerOf = {},
): string {
  const key = provider === "anthropic" ? "stop_reason" : "finish_reason";
  const why =
    reason === "refusal"
      ? `the model refused to answer (${key} refusal)`
      : `the endpoint's content filter stopped the model's answer (${key} ${reason ?? "content_filter"})`;
  const azure =
    provider === "openai" && reason !== "refusal"
      ? "; on Azure OpenAI, the deployment's content filter decides"
      : "";
  // A sampling run delivers nothing: its answer goes back to the server that asked.
  const answer =
    samplingServerOf(of.route) === undefined
      ? "the run has no reply to deliver"
      : "there is no answer to give the server";
  const change =
    of.image === true
      ? "there is no answer to give: the image or the question set it off; ask about it in other words or about another image"
      : `${answer}: change what ${promptToChange(of.route)} or agent.system_prompt asks for`;
  return `${why} — ${change}, or use another ${of.modelKey ?? "agent.model"} than ${of.quoted ?? `"${model}"`}${azure}`;
}

/**
 * Recorded for each call of a turn the endpoint's safety system stopped: the AI SDK runs no tool of such a
 * turn (its calls may be cut short where the filter struck).
 */
export const NOT_RUN_FILTERED =
  "not run: the endpoint's safety system stopped the model's answer while it asked for this call";

/** The Messages API's stop reason for a turn that filled the model's context window. */
const CONTEXT_WINDOW_STOP = "model_context_window_exceeded";

/** How a model answer ended, as the AI SDK reports it (a turn of the loop, `vision_analyze`'s answer). */
export interface TurnEnd {
  readonly finishReason: string;
  readonly rawFinishReason?: string | undefined;
}

/** A turn stopped at the output token limit (`finish_reason: length`, `stop_reason: max_tokens`). */
export const cutShort = (turn: TurnEnd | undefined): turn is TurnEnd => turn?.finishReason === "length";

/**
 * A turn the endpoint's safety system stopped; not an OpenAI `refusal` the model wrote (finish reason
 * `stop`, which the AI SDK also calls `content-filter`).
 */
export const stoppedByFilter = (turn: TurnEnd | undefined): turn is TurnEnd =>
  turn?.finishReason === "content-filter" && turn.rawFinishReason !== "stop";

/** A cut turn that filled the model's context window, not `max_tokens` (a larger limit would not help). */
export const cutAtContextWindow = (turn: TurnEnd | undefined): boolean =>
  cutShort(turn) && turn.rawFinishReason === CONTEXT_WINDOW_STOP;

/** Where a turn cut short was cut: its `max_tokens`, the end of the model's context window, or either. */
export type CutAt = "max_tokens" | "context_window" | "either";

/**
 * A cut turn that ended at Mistral's `model_length` (read as `length`, the endpoint's reason kept with the
 * answer): the model's `max_tokens` or its context window, which the reason does not tell apart.
 */
export const cutAtEither = (
  turn: (TurnEnd & { readonly response: { readonly body?: unknown } }) | undefined,
) => cutShort(turn) && keptFinishReason(turn.response.body) === MISTRAL_LENGTH;

/**
 * Why an answer cut short before it wrote any text is no answer: a reasoning model (DeepSeek R1, Qwen3 on
 * Ollama, o-series, extended thinking) can spend the whole limit on its reasoning. `filled` says what filled
 * the context window when that was the cut, and what to make smaller.
 */
export function cutBeforeAnyText(maxTokens: number, at: CutAt, filled: string): string {
  if (at === "either")
    return `the model's answer was cut at agent.max_tokens (${maxTokens} tokens) or at the end of its context window (finish_reason ${MISTRAL_LENGTH}) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens; if it was the context window, ${filled} or use a model with a larger context window`;
  return at === "context_window"
    ? `the model's answer was cut at the end of its context window (stop_reason ${CONTEXT_WINDOW_STOP}) before it wrote any text — ${filled} or use a model with a larger context window`
    : `the model's answer was cut at agent.max_tokens (${maxTokens} tokens) before it wrote any text (a reasoning model can spend them all on its reasoning) — raise agent.max_tokens`;
}

/** A turn after which the loop asks the model nothing more: its calls, if any, are not run. */
const endsTheRun = (turn: TurnEnd | undefined): boolean => cutShort(turn) || stoppedByFilter(turn);

/**
 * A turn none of whose calls is run: one that ends the run, or one the endpoint cut off itself (DeepSeek's
 * `insufficient_system_resource`), whose last call's arguments may be incomplete as at `max_tokens`. (Such a
 * turn with no calls is read as an answer the endpoint did not finish: `heldOnlyItsThinking`.)
 */
const runsNoCalls = (turn: TurnEnd | undefined): boolean =>
  endsTheRun(turn) || endpointCutReason(turn?.rawFinishReason) !== undefined;

/** A model answer's parts, as the AI SDK gives them (a turn of the loop, `vision_analyze`'s answer). */
export interface AnsweredTurn extends TurnEnd {
  readonly text: string;
  readonly content: ReadonlyArray<{
    readonly type: string;
    readonly text?: string;
    readonly providerMetadata?: unknown;
  }>;
  readonly toolCalls: readonly unknown[];
  readonly response: { readonly body?: unknown };
}

/**
 * How an answer with no reply text held only the model's thinking (`heldOnlyItsThinking`): written in its
 * text (`in_text`), sent apart by the server (`apart`), or either of those (`of`) in an answer the endpoint
 * ended for a reason that is no finished answer (`unfinished`, with that reason as the endpoint sent it).
 */
export type ThinkingOnly =
  | { readonly kind: "in_text" | "apart" }
  | {
      readonly kind: "unfinished";
      readonly reason: string | undefined;
      readonly of: "in_text" | "apart";
    };

/**
 * The endpoints' reasons for an answer the model finished: Chat Completions' `stop`, the Messages API's
 * `end_turn` and `stop_sequence` (TGI's too), Together's `eos` and TGI's (watsonx's) `eos_token`, the model's
 * end-of-sequence token.
 */
const FINISHED = new Set(["stop", "end_turn", "stop_sequence", "eos", "eos_token"]);

/**
 * A reasoning part that holds the model's thinking: its text, not blank; the Messages API's
 * `redacted_thinking` (which the AI SDK gives with an empty text and its data in the provider metadata); or a
 * signed `thinking` block, whatever its text (Claude's with `display: omitted` comes with an empty one, its
 * thinking held in the signature). Unsigned blank reasoning is none.
 */
function isThinking(part: AnsweredTurn["content"][number]): boolean {
  if (part.type !== "reasoning") return false;
  if ((part.text ?? "").trim() !== "") return true;
  const anthropic = (
    part.providerMetadata as { anthropic?: { redactedData?: unknown; signature?: unknown } } | undefined
  )?.anthropic;
  return [anthropic?.redactedData, anthropic?.signature].some(
    (held) => typeof held === "string" && held !== "",
  );
}

/**
 * Whether a Chat Completions answer's message carries OpenRouter's `reasoning_details` with some reasoning
 * (an encrypted entry's data, as an OpenAI model's reasoning comes with no text; a signed entry, as Claude's
 * thinking with an empty text comes; a text or summary not blank).
 */
function reasoningDetailsIn(body: unknown): boolean {
  const choices = (body as { choices?: unknown } | null | undefined)?.choices;
  if (!Array.isArray(choices)) return false;
  const details = (choices[0] as { message?: { reasoning_details?: unknown } } | undefined)?.message
    ?.reasoning_details;
  if (!Array.isArray(details)) return false;
  return details.some((entry: unknown) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    if (typeof e.signature === "string" && e.signature !== "") return true;
    const held =
      e.type === "reasoning.encrypted" ? e.data : e.type === "reasoning.summary" ? e.summary : e.text;
    return typeof held === "string" && held.trim() !== "";
  });
}

/**
 * A turn that called no tools and has no reply text, only the model's thinking: written in its text and
 * taken apart (`THINKING_ONLY` on the answer), or sent apart by the server (Chat Completions'
 * `reasoning_content` or `reasoning` beside an empty `content`, or OpenRouter's `reasoning_details` alone, as an
 * OpenAI model's encrypted reasoning comes; a Messages API answer of thinking or redacted thinking blocks
 * alone). Not a turn cut short, stopped by the safety system or still paused (their
 * own rules), nor an empty `<think></think>` block or blank reasoning: such a turn is an empty reply. Only an
 * answer the model finished (`FINISHED`: `stop`, `end_turn`, `stop_sequence`, `eos`, `eos_token`) held only
 * its thinking; one the endpoint ended otherwise (DeepSeek's `insufficient_system_resource`, `tool_calls` with
 * no calls) is `unfinished`, its thinking's kind kept.
 */
export function heldOnlyItsThinking(turn: AnsweredTurn | undefined): ThinkingOnly | undefined {
  if (turn === undefined || turn.text.trim() !== "") return undefined;
  if (endsTheRun(turn) || turn.rawFinishReason === PAUSED_TURN || turn.toolCalls.length > 0) return undefined;
  const kind = heldOnlyThinking(turn.response.body)
    ? ("in_text" as const)
    : turn.content.some(isThinking) || reasoningDetailsIn(turn.response.body)
      ? ("apart" as const)
      : undefined;
  if (kind === undefined) return undefined;
  const reason = turn.rawFinishReason;
  const finished = reason === undefined ? turn.finishReason === "stop" : FINISHED.has(reason);
  return finished ? { kind } : { kind: "unfinished", reason, of: kind };
}

/** Why a run (or `vision_analyze`'s image question) whose answer held only the model's thinking fails. */
export function thinkingOnlyFailure(thinkingOnly: ThinkingOnly): string {
  if (thinkingOnly.kind === "unfinished")
    return unfinishedThinkingFailure(thinkingOnly.reason, thinkingOnly.of);
  return thinkingOnly.kind === "in_text" ? THINKING_ONLY_FAILURE : REASONING_ONLY_FAILURE;
}

const thinkingOnlyOf = (last: AnsweredTurn | undefined): { thinkingOnly?: ThinkingOnly } => {
  const thinkingOnly = heldOnlyItsThinking(last);
  return thinkingOnly === undefined ? {} : { thinkingOnly };
};

/**
 * One run's tool loop: the prompt as the user message, at most `maxSteps` model turns, tool results fed
 * back between turns. Each call gets an id of its own in the run (some servers repeat ids: see
 * `uniqueToolCallIds`), as the SDK pairs calls and results by id. A call naming an unknown tool or with unparsable arguments comes back to the model
 * as a tool error (the SDK does that); it is recorded here since no tool ran. Retries are the model's
 * own (`withRetryPolicy`), so the SDK's are off.
 */
export async function runToolLoop(input: ToolLoopInput, progress: LoopProgress): Promise<LoopResult> {
  const hasTools = Object.keys(input.tools).length > 0;
  let paused: PausedTurnEnd | undefined;
  const result = await generateText({
    model: wrapLanguageModel({
      model: input.model,
      // A paused turn is continued below the others, so its continuation is part of the one turn they see.
      middleware: [
        unreadableArgumentsMiddleware((id, error) => input.log.refuse(id, error)),
        uniqueToolCallIdsMiddleware(),
        toolCallsFinishMiddleware,
        pausedTurnsMiddleware((end) => {
          paused = end;
        }),
        ...(input.unoffered === undefined ? [] : [unofferedToolsMiddleware(input.unoffered)]),
        recordedToolErrorsMiddleware((id) => input.log.errorOf(id)),
      ],
    }),
    ...(input.system === undefined ? {} : { system: input.system }),
    prompt: input.prompt,
    ...(hasTools ? { tools: input.tools } : {}),
    // A turn cut short (max_tokens, the context window) or stopped by the safety system runs none of its
    // calls; the SDK would still answer calls whose arguments do not parse (most often the cut one's) with a
    // parse error and ask the model again, so such a turn ends the loop here, whatever its calls.
    stopWhen: [stepCountIs(input.maxSteps), ({ steps }) => runsNoCalls(steps.at(-1))],
    maxOutputTokens: input.maxTokens,
    maxRetries: 0,
    abortSignal: input.signal,
    onStepFinish(step) {
      progress.steps += 1;
      progress.inputTokens += step.usage.inputTokens ?? 0;
      progress.outputTokens += step.usage.outputTokens ?? 0;
      for (const part of step.content) {
        // A cut or stopped turn's calls are all recorded as not run, below.
        if (part.type !== "tool-error" || input.log.has(part.toolCallId) || runsNoCalls(step)) continue;
        // A name the run could not be offered is no tool of the run's set: the SDK's error is "unavailable tool".
        // Held to the cap as a tool's own error is: the SDK's quotes the arguments the model wrote.
        const { text: error, cut } = cutToolText(
          input.unoffered?.(part.toolName) ??
            toolErrorText(part.toolName, part.error, Object.keys(input.tools)),
          input.maxResultChars ?? 0,
        );
        input.log.add(part.toolCallId, {
          name: input.log.registeredName(part.toolName),
          ms: 0,
          ok: false,
          error,
          ...(cut && { cut }),
        });
      }
      // The log and the journal list a turn's calls as the model asked for them, not as they finished.
      input.log.orderTurn(step.toolCalls.map((call) => call.toolCallId));
    },
  });
  const last = result.steps.at(-1);
  // Some OpenAI-compatible servers end a turn that calls tools with `finish_reason: "stop"`: the calls
  // themselves say the model still wanted tools.
  const wantedTools = last !== undefined && (last.finishReason === "tool-calls" || last.toolCalls.length > 0);
  const cutAtMaxTokens = cutShort(last);
  const contextWindow = cutAtContextWindow(last);
  const either = cutAtEither(last);
  const byEndpoint = endpointCutReason(last?.rawFinishReason);
  const cut =
    last !== undefined && (cutAtMaxTokens || byEndpoint !== undefined)
      ? last.toolCalls.filter((call) => !input.log.has(call.toolCallId))
      : [];
  const notRun =
    byEndpoint !== undefined
      ? notRunCutByEndpoint(byEndpoint)
      : contextWindow
        ? NOT_RUN_CUT_CONTEXT
        : either
          ? NOT_RUN_CUT_EITHER
          : NOT_RUN_CUT;
  // A turn the safety system stopped runs no tool either: its calls are listed as not run, as every call is.
  const filtered = stoppedByFilter(last);
  const stopped = filtered ? last.toolCalls.filter((call) => !input.log.has(call.toolCallId)) : [];
  for (const [calls, why] of [
    [cut, notRun],
    [stopped, NOT_RUN_FILTERED],
  ] as const)
    for (const call of calls)
      input.log.add(call.toolCallId, {
        name: input.log.registeredName(call.toolName),
        ms: 0,
        ok: false,
        error: why,
      });
  return {
    text: result.text,
    stoppedAtMaxSteps: wantedTools && result.steps.length >= input.maxSteps,
    cutAtMaxTokens,
    ...(contextWindow ? { cutAtContextWindow: true as const } : {}),
    ...(either ? { cutAtModelLength: true as const } : {}),
    ...(byEndpoint === undefined ? {} : { cutByEndpoint: byEndpoint }),
    ...(last?.rawFinishReason === PAUSED_TURN && paused !== undefined ? { stillPaused: paused } : {}),
    cutToolCalls: cut.length,
    ...(filtered ? { filtered: { reason: last.rawFinishReason } } : {}),
    ...thinkingOnlyOf(last),
    modelId: result.response.modelId,
  };
}

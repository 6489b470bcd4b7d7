import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;
type Result = Awaited<ReturnType<ProviderModel["doGenerate"]>>;
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type AssistantPart = Extract<Prompt[number], { role: "assistant" }>["content"][number];
type Usage = Result["usage"];

/** The Messages API's stop reason for a turn it paused before the model finished it. */
export const PAUSED_TURN = "pause_turn";

/** How often one paused turn is sent back to go on before what it holds is taken as the answer. */
export const MAX_TURN_CONTINUATIONS = 5;

const sum = (a: number | undefined, b: number | undefined) =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);

function addedUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: {
      total: sum(a.inputTokens.total, b.inputTokens.total),
      noCache: sum(a.inputTokens.noCache, b.inputTokens.noCache),
      cacheRead: sum(a.inputTokens.cacheRead, b.inputTokens.cacheRead),
      cacheWrite: sum(a.inputTokens.cacheWrite, b.inputTokens.cacheWrite),
    },
    outputTokens: {
      total: sum(a.outputTokens.total, b.outputTokens.total),
      text: sum(a.outputTokens.text, b.outputTokens.text),
      reasoning: sum(a.outputTokens.reasoning, b.outputTokens.reasoning),
    },
  };
}

/**
 * A paused turn's content as the assistant message that continues it: its text and its thinking (with the
 * signature the API checks), the last text without the trailing whitespace the API refuses at the end of
 * an assistant message ("final assistant content cannot end with trailing whitespace"). Undefined when it
 * holds anything else (a tool call), which is not sent back this way.
 */
function pausedMessage(content: Result["content"]): AssistantPart[] | undefined {
  const parts: AssistantPart[] = [];
  for (const part of content) {
    if (part.type !== "text" && part.type !== "reasoning") return undefined;
    parts.push({
      type: part.type,
      text: part.text,
      ...(part.providerMetadata === undefined ? {} : { providerOptions: part.providerMetadata }),
    });
  }
  const last = parts.at(-1);
  if (last?.type === "text") parts[parts.length - 1] = { ...last, text: last.text.trimEnd() };
  return parts.length === 0 ? undefined : parts;
}

/**
 * How a model turn the Messages API still paused ended: the continuations svc sent for it, and, when it
 * could send no more before `MAX_TURN_CONTINUATIONS`, the paused content's block types it cannot send back
 * (`server_tool_use`, as an endpoint that runs tools of its own writes; none for a turn paused with no content).
 */
export interface PausedTurnEnd {
  readonly continuations: number;
  readonly unsent?: readonly string[];
}

/** The block types of a paused answer that `pausedMessage` sends back. */
const SENDABLE_BLOCKS: ReadonlySet<string> = new Set(["text", "thinking", "redacted_thinking"]);

/**
 * The types of the blocks of a paused answer that are not sent back, as the API wrote them (its `content`);
 * the AI SDK's names of its parts where those do not say (a text block's citations are parts of their own).
 */
function unsentTypes(result: Result): string[] {
  const body = result.response?.body as { content?: unknown } | null | undefined;
  const blocks = Array.isArray(body?.content)
    ? body.content.map((block) => String((block as { type?: unknown } | null)?.type))
    : [];
  const parts = result.content.map((part) => part.type).filter((type) => type !== "reasoning");
  const unsent = (types: string[]) => [...new Set(types.filter((type) => !SENDABLE_BLOCKS.has(type)))];
  const named = unsent(blocks);
  return named.length > 0 ? named : unsent(parts);
}

/**
 * A turn the Messages API paused (`stop_reason: pause_turn`: it stopped a long turn before the model
 * finished it) goes on as the API asks: the paused answer is sent back as the last assistant message and
 * the API continues it, up to `MAX_TURN_CONTINUATIONS` times. The turn is the paused parts and their
 * continuation, with the usage of every call; the SDK took a paused turn for a finished one, so its cut
 * text was delivered as the run's reply. Other finish reasons are left as they are. `report` is told, for
 * each model turn, how one still paused ended (undefined for a turn that was not).
 */
export function pausedTurnsMiddleware(report: (end: PausedTurnEnd | undefined) => void): Middleware {
  return {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate, params, model }) => {
      let result: Result = await doGenerate();
      let continuations = 0;
      let unsent: string[] | undefined;
      while (continuations < MAX_TURN_CONTINUATIONS && result.finishReason.raw === PAUSED_TURN) {
        const paused = pausedMessage(result.content);
        if (paused === undefined) {
          unsent = unsentTypes(result);
          break;
        }
        const next = await model.doGenerate({
          ...params,
          prompt: [...params.prompt, { role: "assistant", content: paused }],
        });
        continuations++;
        result = {
          ...next,
          content: [...result.content, ...next.content],
          usage: addedUsage(result.usage, next.usage),
        };
      }
      report(
        result.finishReason.raw !== PAUSED_TURN
          ? undefined
          : { continuations, ...(unsent === undefined ? {} : { unsent }) },
      );
      return result;
    },
  };
}

/**
 * Why a run whose last turn the Messages API paused with content svc cannot send back for it to go on, before
 * the model wrote any text, fails: an empty reply delivered as an answer would say nothing of why.
 */
export function unsendablePauseFailure(unsent: readonly string[]): string {
  const what =
    unsent.length === 0
      ? "with no content to send back for it to go on"
      : `with content svc cannot send back for it to go on (${unsent.join(", ")})`;
  return `the Messages API paused the turn (stop_reason pause_turn) ${what}, before the model wrote any text — the run has no reply to deliver`;
}

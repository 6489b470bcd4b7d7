import { generateId, type wrapLanguageModel } from "ai";
import {
  ALTERED_NUMBERS,
  NESTED_TOO_DEEP,
  scanJsonText,
  stringifyJson,
} from "../streams/jsonNumbers/index.js";
import { inexactArguments, inexactNumber, inexactNumberIn } from "../streams/jsonNumbers/inexact.js";
import { nestedDeeperThan } from "../streams/nestedDepth.js";
import type { ProviderModel } from "./retry.js";
import { THINKING_ONLY, type ThinkingSplit, thinkingInText } from "./thinkText.js";

/** The provider-level prompt and middleware (`@ai-sdk/provider` is not a direct dependency). */
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

const isObject = (value: unknown) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The run's messages with each earlier tool call's arguments a JSON object. A model that called a tool with
 * `null`, `[]` or `"x"` got a tool error and the call was not run, but the turn is sent back as the model
 * wrote it, and servers that render the history with the model's chat template refuse the whole request
 * (vLLM: `'None' has no attribute 'items'`, SGLang: a 400), so the run would fail on its next turn. Such a
 * call is sent back with `{}`, as the AI SDK already sends a call whose arguments were not JSON at all.
 */
export function objectToolInputs(prompt: Prompt): Prompt {
  return prompt.map((message) => {
    if (message.role !== "assistant") return message;
    if (message.content.every((part) => part.type !== "tool-call" || isObject(part.input))) return message;
    return {
      ...message,
      content: message.content.map((part) =>
        part.type === "tool-call" && !isObject(part.input) ? { ...part, input: {} } : part,
      ),
    };
  });
}

/** `objectToolInputs` on every model call (both providers: the Messages API takes only an object too). */
export const objectToolInputsMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({ ...params, prompt: objectToolInputs(params.prompt) }),
};

/**
 * The deepest nesting of objects and arrays a tool call's arguments may have. JSON.parse reads any depth,
 * but the AI SDK copies each turn's calls with structuredClone and the next request writes them out with
 * JSON.stringify, both recursive: some thousands of levels (`{"x": [[[[...]]]]}`, which a prompt-injected
 * payload can ask the model for) failed the whole run with `Maximum call stack size exceeded`. No tool's
 * schema nests this deep.
 */
export const MAX_ARGUMENT_DEPTH = 100;

/** Arguments text nested one level past `MAX_ARGUMENT_DEPTH`: what stands for arguments too deep to write out. */
export const TOO_DEEP_ARGUMENTS_TEXT = `${"[".repeat(MAX_ARGUMENT_DEPTH + 1)}${"]".repeat(MAX_ARGUMENT_DEPTH + 1)}`;

/**
 * A Messages API answer in the shape the AI SDK reads, or `undefined` when it needs no change:
 * - `tool_use` inputs (objects, which the AI SDK writes out as text with JSON.stringify) nested deeper than
 *   `MAX_ARGUMENT_DEPTH` are each replaced by `TOO_DEEP_ARGUMENTS_TEXT`'s value, which the tool loop refuses
 *   as it would the input itself;
 * - a `thinking` block without a `signature`, as servers that speak the Messages API in front of other models
 *   write one (Ollama's, for a model that thinks: qwen3, deepseek-r1, gpt-oss), gets an empty one: the SDK
 *   refused the whole answer for want of it, failing every run. Only Anthropic checks a signature, and its
 *   own thinking blocks carry theirs; the block goes back with its turn as the SDK sends any thinking;
 * - no `usage`, or one without a number of input or output tokens, as servers and proxies that count no
 *   tokens answer: the SDK refused the whole answer for want of it; the missing counts are 0, as a Chat
 *   Completions answer without `usage` counts;
 * - a `tool_use` input written as a string holding an object's JSON text (a model's double-encoded
 *   arguments): that object, as the Chat Completions path reads such arguments;
 * - a text block with `"citations": null`, as the API reference shows one and gateways that re-encode answers
 *   through Anthropic's SDK types (which write every field) send each: without it, since the SDK takes
 *   citations only as a list and refused the whole answer, failing every run;
 * - a first text block that starts with a reasoning model's thinking (`thinkingInText`), as a server that
 *   speaks the Messages API in front of a model whose thinking it does not parse out writes it (vLLM's or
 *   llama.cpp's `/v1/messages` without a reasoning parser, a proxy in front of either), when no thinking
 *   block came: the thinking becomes a `thinking` block before the answer's text, as the Chat Completions
 *   path makes it `reasoning_content`, so it is not delivered as part of the reply. Not for Anthropic's own
 *   API (`thinkingInText: false`): its models' thinking comes in signed blocks, and a block made up here
 *   would go back unsigned, which it refuses. An answer whose finished turn held only that thinking, no text
 *   after it in any block and no tool call, carries `THINKING_ONLY`, which fails the run (`runToolLoop`'s
 *   `thinkingOnly`);
 * - a `tool_use` without an `id` (or a null one), as servers in front of other models write one: an id made
 *   with the AI SDK's `generateId`, as its Chat Completions path gives such a call. The SDK refused the whole
 *   answer for want of it, failing the run;
 * - a `tool_use` without a `name`, or with one that is no text (`null`): named `""`, a made-up name the tool
 *   loop answers with a tool error (`unknown_tool` in the turn sent back), as a `tool_use` named `""` is. The
 *   SDK refused the whole answer for want of it, failing the run;
 * - a `tool_use` without an `input`, with `"input": null`, or with an empty or blank text for it, as proxies
 *   that write the API's answers from their own types (Go's `json:"input,omitempty"`, or a nil input Go's
 *   encoding/json and pydantic write as `null`) send a call of a tool without arguments: `{}`, as the Chat
 *   Completions path reads empty arguments. The SDK refused the whole answer for want of it, failing the
 *   run, and took `""` or `null` for arguments that are no object (a tool error);
 * - `"content": null` (a Go nil slice) as no content (`[]`): the SDK refused the whole answer, failing the
 *   run, where `content: []` is delivered as an empty reply;
 * - a `tool_use` input holding a number a double does not hold (an id past 2^53, read with `parseJson` so its
 *   text is known): the input's text as written, as a string (the SDK would write the input back out with
 *   the neighbouring number), which the tool loop refuses naming the number (`argumentsRefusal`); a
 *   double-encoded input holding one stays the string it is.
 */
export function normalizedMessagesAnswer(
  answer: unknown,
  options: { readonly thinkingInText: boolean } = { thinkingInText: true },
): unknown {
  const written = (answer as { content?: unknown } | null)?.content;
  const content = written === null && isObject(answer) ? [] : written;
  if (!Array.isArray(content)) return undefined;
  const deep = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" &&
    argumentsNestTooDeep((part as { input?: unknown }).input);
  const unsigned = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "thinking" &&
    typeof (part as { signature?: unknown }).signature !== "string";
  const encoded = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" &&
    objectText((part as { input?: unknown }).input) !== undefined;
  const noId = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" && (part as { id?: unknown }).id == null;
  const unnamed = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" &&
    typeof (part as { name?: unknown }).name !== "string";
  const noInput = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" &&
    blankInput((part as { input?: unknown }).input);
  const inexact = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "tool_use" &&
    inexactNumberIn((part as { input?: unknown }).input) !== undefined;
  const nullCitations = (part: unknown) =>
    (part as { type?: unknown } | null)?.type === "text" &&
    (part as { citations?: unknown }).citations === null;
  const usage = (answer as { usage?: unknown }).usage;
  const tokens: Record<string, unknown> = isObject(usage) ? (usage as Record<string, unknown>) : {};
  const counted = typeof tokens.input_tokens === "number" && typeof tokens.output_tokens === "number";
  const stopReason = (answer as { stop_reason?: unknown }).stop_reason;
  const split = options.thinkingInText
    ? thinkingInTextBlock(
        content,
        stopReason === "max_tokens" || stopReason === "model_context_window_exceeded",
      )
    : undefined;
  if (
    counted &&
    written !== null &&
    split === undefined &&
    !content.some(
      (part) =>
        deep(part) ||
        unsigned(part) ||
        encoded(part) ||
        nullCitations(part) ||
        noId(part) ||
        unnamed(part) ||
        noInput(part) ||
        inexact(part),
    )
  )
    return undefined;
  const count = (value: unknown) => (typeof value === "number" ? value : 0);
  const parts: unknown[] =
    split === undefined
      ? content
      : [
          // An empty one (`<think>\n\n</think>`, as Qwen3 writes it when told not to think) is left out.
          ...(split.thinking === "" ? [] : [{ type: "thinking", thinking: split.thinking, signature: "" }]),
          ...(split.answer === "" ? [] : [{ ...(content[0] as object), text: split.answer }]),
          ...content.slice(1),
        ];
  return {
    ...(answer as object),
    ...(split?.only === true ? { [THINKING_ONLY]: true } : {}),
    usage: counted
      ? usage
      : { ...tokens, input_tokens: count(tokens.input_tokens), output_tokens: count(tokens.output_tokens) },
    content: parts.map((part: unknown) => {
      if (nullCitations(part)) {
        const { citations: _none, ...text } = part as Record<string, unknown>;
        return text;
      }
      const identified = noId(part) ? { ...(part as object), id: generateId() } : part;
      const named = unnamed(identified) ? { ...(identified as object), name: "" } : identified;
      if (noInput(named)) return { ...(named as object), input: {} };
      if (inexact(named))
        return { ...(named as object), input: stringifyJson((named as { input: unknown }).input) };
      const input = encoded(named)
        ? { ...(named as object), input: JSON.parse(objectText((named as { input: unknown }).input) ?? "{}") }
        : named;
      return deep(input)
        ? { ...(input as object), input: JSON.parse(TOO_DEEP_ARGUMENTS_TEXT) }
        : unsigned(input)
          ? { ...(input as object), signature: "" }
          : input;
    }),
  };
}

/**
 * A `tool_use` input that is missing, `null` (as Go's encoding/json and pydantic write a nil input), or an
 * empty or blank text.
 */
function blankInput(input: unknown): boolean {
  return input == null || (typeof input === "string" && input.trim() === "");
}

/**
 * A `tool_use` input written as a string holding an object's JSON text (a model's double-encoded arguments,
 * passed through by a server that speaks the Messages API in front of it): that text, else undefined.
 */
function objectText(input: unknown): string | undefined {
  if (typeof input !== "string") return undefined;
  try {
    return isObject(JSON.parse(input)) && inexactNumber(input) === undefined ? input : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The thinking at the start of an answer's first block, when that is text and no block is thinking
 * (`thinkingInText`, for a turn `cut` at its output limit or not; a reply is whatever text is left across all
 * the text blocks, not the first one's alone).
 */
function thinkingInTextBlock(content: readonly unknown[], cut: boolean): ThinkingSplit | undefined {
  const first = content[0] as { type?: unknown; text?: unknown } | null | undefined;
  if (first?.type !== "text" || typeof first.text !== "string") return undefined;
  const types = content.map((part) => (part as { type?: unknown } | null)?.type);
  if (types.includes("thinking") || types.includes("redacted_thinking")) return undefined;
  // A reply left in a later text block (the thinking ending in the first, the answer a block of its own) counts.
  const textAfter = content.slice(1).some((part) => {
    const block = part as { type?: unknown; text?: unknown } | null;
    return block?.type === "text" && typeof block.text === "string" && block.text.trim() !== "";
  });
  return thinkingInText(first.text, { cut, calls: types.includes("tool_use"), textAfter });
}

/** What the model (or a command agent) gets for a call whose arguments nest deeper than `MAX_ARGUMENT_DEPTH`. */
export const TOO_DEEP = `arguments nest objects or arrays deeper than ${MAX_ARGUMENT_DEPTH} levels; the tool was not run`;

/**
 * Whether a call's arguments (read from JSON already: a `tool_use` input, a command agent's call at its
 * run's MCP endpoint) nest objects or arrays deeper than `MAX_ARGUMENT_DEPTH`, the arguments the first level.
 */
export function argumentsNestTooDeep(args: unknown): boolean {
  return nestedDeeperThan(args, MAX_ARGUMENT_DEPTH);
}

/**
 * Why the tool is not run on a call's arguments text, or undefined: JSON nested deeper than
 * `MAX_ARGUMENT_DEPTH` (`TOO_DEEP`), or holding a number a double does not hold (`inexactArguments`), also
 * where the text is a JSON string holding the object's text (a Messages API input kept so, below). Text that
 * is not JSON is the SDK's to refuse.
 */
export function argumentsRefusal(input: string): string | undefined {
  if (tooDeep(input)) return TOO_DEEP;
  if ((scanJsonText(input, MAX_ARGUMENT_DEPTH) & ALTERED_NUMBERS) === 0 && !/^\s*"/.test(input))
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return undefined;
  }
  const number = inexactNumber(typeof parsed === "string" ? parsed : input);
  return number === undefined ? undefined : inexactArguments(number);
}

/**
 * Each answer's tool calls with arguments the tool is not run on (`argumentsRefusal`) get `{}` for arguments
 * before the AI SDK reads them, and `refuse` is told their ids and why: the tool is not run on them (the
 * model gets the reason as the tool's error) and the turn goes back to the model with `{}`, as a call whose
 * arguments are not JSON does. Arguments nested some thousands of levels would fail the whole run in the
 * SDK's copies of the turn; a number such as an id past 2^53 would reach the tool as a neighbouring one
 * (JSON.parse reads it as the nearest double). Listed before `uniqueToolCallIdsMiddleware`, so it sees the
 * ids the run uses.
 */
export function unreadableArgumentsMiddleware(
  refuse: (toolCallId: string, error: string) => void,
): Middleware {
  return {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      const refusals = result.content.map((part) =>
        part.type === "tool-call" ? argumentsRefusal(part.input) : undefined,
      );
      if (refusals.every((refusal) => refusal === undefined)) return result;
      const content = result.content.map((part, i) => {
        const refusal = refusals[i];
        if (part.type !== "tool-call" || refusal === undefined) return part;
        refuse(part.toolCallId, refusal);
        return { ...part, input: "{}" };
      });
      return { ...result, content };
    },
  };
}

/** Whether a call's arguments text is JSON nested too deep (text that is not JSON is the SDK's to refuse). */
function tooDeep(input: string): boolean {
  // Fewer brackets than that cannot nest so deep; a deeper text is parsed only to tell JSON from not.
  if (input.length <= MAX_ARGUMENT_DEPTH * 2) return false;
  if ((scanJsonText(input, MAX_ARGUMENT_DEPTH) & NESTED_TOO_DEEP) === 0) return false;
  try {
    JSON.parse(input);
    return true;
  } catch {
    return false;
  }
}

import { stringifyJson } from "../streams/jsonNumbers/index.js";
import { withFlatContent } from "./chatContentParts.js";
import { endpointCutReason } from "./endpointCut.js";
import { opensWithThinkingBlock, THINKING_ONLY, thinkingInText } from "./thinkText.js";
import { argumentsNestTooDeep, TOO_DEEP_ARGUMENTS_TEXT } from "./toolCallInputs.js";

/**
 * A Chat Completions answer in the shape the AI SDK reads, where servers that call themselves
 * OpenAI-compatible write tool calls their own way; without this the SDK refuses the whole answer
 * ("gave an answer svc cannot use") or drops the call:
 * - `function.arguments` as a JSON object rather than its text (servers that pass their model's parsed
 *   arguments through, as Ollama's own API writes them): sent on as its JSON text; `null` or no `arguments`
 *   at all (a call of a tool without parameters) as the text `null` (a tool error, as any arguments that
 *   are no object) or as empty arguments (`{}`): the SDK refused the whole answer, failing the run;
 *   arguments nested too deep to be written out as text are refused by the tool loop, the run goes on;
 *   arguments a model wrote double-encoded (an object's JSON text inside a JSON string) as that object's text;
 * - a call without a `name`, or with one that is no text (`null`): named `""`, a made-up name the tool loop
 *   answers with a tool error (`unknown_tool` in the turn sent back), as a call named `""` is; the SDK
 *   refused the whole answer, failing the run;
 * - the legacy `function_call` (with `finish_reason: function_call`) instead of `tool_calls`, as older
 *   servers answer: taken as the one tool call it names (the SDK gives it an id);
 * - `content` as an array of parts, read as one text first (`withFlatContent`), so what follows reads it too;
 * - a reasoning model's thinking written into its text between `<think>` and `</think>` (`thinkingApart`),
 *   unless `options.thinkingInText` is false (OpenAI's own API, which never writes it there); an answer whose
 *   finished turn held only that thinking, no text after it and no tool call, carries `THINKING_ONLY`, which
 *   fails the run (`runToolLoop`'s `thinkingOnly`);
 * - Mistral's `finish_reason: "model_length"` (a turn cut at the model's length limit) as `length`, so the
 *   turn is read as cut (its calls not run, an answer cut before any text a failure, thinking never closed
 *   taken as thinking): the SDK read it as a finished turn of another kind. The answer keeps the endpoint's
 *   reason in `RAW_FINISH_REASON`, as that limit may be `max_tokens` or the context window's end;
 * - a `refusal` next to a text of its own (`withoutRepeatedRefusal`): the SDK added it after the text.
 * And an answer whose choice failed while it was written (OpenRouter's `finish_reason: "error"`, with the
 * provider's `error` in the choice) is made one the SDK refuses, quoting that error, as OpenRouter's
 * `{"error": ...}` body is: the SDK reads it as a finished turn, so its empty or cut-short text was delivered
 * as the run's reply.
 * Returns `undefined` when the answer needs no change (the common case), so nothing is re-serialised.
 */
export function normalizedChatAnswer(
  answer: unknown,
  options: { readonly thinkingInText: boolean } = { thinkingInText: true },
): unknown {
  if (!isRecord(answer) || !Array.isArray(answer.choices)) return undefined;
  const first: unknown = answer.choices[0];
  if (isRecord(first) && first.finish_reason === "error")
    return { finish_reason: "error", ...(first.error === undefined ? {} : { error: first.error }) };
  let changed = false;
  let only = false;
  let modelLength = false;
  const choices = answer.choices.map((original: unknown) => {
    if (!isRecord(original)) return original;
    const lengthCut = original.finish_reason === MISTRAL_LENGTH;
    const choice = lengthCut ? { ...original, finish_reason: "length" } : original;
    if (lengthCut) {
      changed = true;
      modelLength = true;
    }
    if (!isRecord(choice.message)) return choice;
    const flat = withFlatContent(choice.message);
    const read = flat ?? choice.message;
    // Cut at a limit, or cut off by the endpoint itself (DeepSeek's insufficient_system_resource): thinking
    // never closed is thinking, not a text to deliver.
    const cut =
      choice.finish_reason === "length"
        ? ("length" as const)
        : endpointCutReason(choice.finish_reason) === undefined
          ? undefined
          : ("endpoint" as const);
    const apart = options.thinkingInText ? thinkingApart(read, cut) : undefined;
    if (apart?.only === true) only = true;
    const thinking = apart?.message;
    const written = withoutRepeatedRefusal(thinking ?? read);
    const message = written ?? thinking ?? read;
    let calls = message.tool_calls;
    if ((calls === undefined || calls === null) && isRecord(message.function_call))
      calls = [{ type: "function", function: message.function_call }];
    else if (!Array.isArray(calls) || !calls.some(callToRewrite)) {
      if (thinking === undefined && written === undefined && flat === undefined) return choice;
      changed = true;
      return { ...choice, message };
    }
    changed = true;
    const { function_call: _legacy, ...rest } = message;
    return {
      ...choice,
      message: {
        ...rest,
        tool_calls: (calls as unknown[]).map((call) => withTextArguments(withTextName(call))),
      },
    };
  });
  if (!changed && !only) return undefined;
  return {
    ...answer,
    choices,
    ...(only ? { [THINKING_ONLY]: true } : {}),
    ...(modelLength ? { [RAW_FINISH_REASON]: MISTRAL_LENGTH } : {}),
  };
}

/**
 * Mistral's finish reason for a turn cut at the model's length limit (Chat Completions' `length`): its
 * `max_tokens`, or the end of its context window, which the reason does not tell apart.
 */
export const MISTRAL_LENGTH = "model_length";

/**
 * The field a normalized answer whose finish reason was rewritten (`model_length` as `length`) carries the
 * endpoint's own reason in, so what the run says of the cut can name both of its causes (`cutAtEither`).
 */
export const RAW_FINISH_REASON = "svc_raw_finish_reason";

/** The endpoint's own finish reason a normalized answer's body kept (`RAW_FINISH_REASON`), if any. */
export function keptFinishReason(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const reason = body[RAW_FINISH_REASON];
  return typeof reason === "string" ? reason : undefined;
}

/**
 * A message whose text starts with a reasoning model's thinking (`thinkingInText`): the thinking becomes the
 * message's `reasoning_content`, as servers that parse it send it (and it goes back with its turn so); the
 * text is the answer after it, so the thinking is not delivered as part of the reply, and a turn `cut` at
 * `max_tokens` while it thought has no text; `only` when a finished turn held nothing but the thinking
 * (`thinkingInText`). A turn the endpoint cut off itself (`cut: "endpoint"`) is read as a finished one, but
 * for thinking never closed, which is thinking (and the turn has no text) as at `max_tokens`: a closed block
 * alone keeps its kind (`only`), so its failure says it was thinking in the text. When the server sent
 * reasoning apart as well (`reasoning_content`, `reasoning`), a `<think>` block at the text's start is still
 * thinking, joined after that reasoning, only when its `</think>` ends its line as a chat template writes it
 * (`opensWithThinkingBlock`): the server parsed the thinking out, so a text that names the tags in a sentence
 * (`<think> and </think> are the tags…`) is the answer, taken as written, as is one with a `</think>` line
 * alone. Undefined when the text starts with no thinking.
 */
function thinkingApart(
  message: Record<string, unknown>,
  cut: "length" | "endpoint" | undefined,
): { readonly message: Record<string, unknown>; readonly only: boolean } | undefined {
  const text = message.content;
  if (typeof text !== "string") return undefined;
  // The reasoning the SDK reads first: `reasoning_content`, else Groq's `reasoning`.
  const before = [message.reasoning_content, message.reasoning].find(
    (reasoning): reasoning is string => typeof reasoning === "string" && reasoning !== "",
  );
  if (before !== undefined && !opensWithThinkingBlock(text)) return undefined;
  const calls =
    (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || isRecord(message.function_call);
  const split =
    thinkingInText(text, { cut: cut === "length", calls }) ??
    (cut === "endpoint" ? thinkingInText(text, { cut: true, calls }) : undefined);
  if (split === undefined) return undefined;
  const reasoning =
    before === undefined || split.thinking === ""
      ? (before ?? split.thinking)
      : `${before}\n${split.thinking}`;
  return {
    message: { ...message, content: split.answer, reasoning_content: reasoning },
    only: split.only === true,
  };
}

/**
 * A message with a `refusal` and a text as well, as servers write the refusal into both: without its
 * `refusal`, which OpenAI sends in place of a text (`content: null`), and which the SDK adds after the
 * text, so the reply said it twice, run together. Undefined when the message has no such pair.
 */
function withoutRepeatedRefusal(message: Record<string, unknown>): Record<string, unknown> | undefined {
  const { refusal, content } = message;
  if (typeof refusal !== "string" || refusal === "") return undefined;
  const text =
    typeof content === "string" ? content.trim() !== "" : Array.isArray(content) && content.length > 0;
  return text ? { ...message, refusal: null } : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function hasArgumentsNotText(call: unknown): boolean {
  if (!isRecord(call) || !isRecord(call.function)) return false;
  return typeof call.function.arguments !== "string";
}

/**
 * Arguments a model wrote double-encoded: the JSON text of an object inside a JSON string
 * (`"\"{\\\"city\\\": \\\"Paris\\\"}\""`), as small models behind Ollama or vLLM sometimes do. The object's
 * text, or undefined for any other arguments (a string that is no object's text is left as it is: the
 * tool loop refuses it).
 */
function doubleEncodedObject(args: unknown): string | undefined {
  if (typeof args !== "string" || !/^\s*"/.test(args)) return undefined;
  try {
    const inner: unknown = JSON.parse(args);
    return typeof inner === "string" && isRecord(JSON.parse(inner)) ? inner : undefined;
  } catch {
    return undefined;
  }
}

function hasNameNotText(call: unknown): boolean {
  return isRecord(call) && isRecord(call.function) && typeof call.function.name !== "string";
}

function callToRewrite(call: unknown): boolean {
  return argumentsToRewrite(call) || hasNameNotText(call);
}

function withTextName(call: unknown): unknown {
  if (!hasNameNotText(call)) return call;
  const record = call as Record<string, unknown> & { function: Record<string, unknown> };
  return { ...record, function: { ...record.function, name: "" } };
}

function argumentsToRewrite(call: unknown): boolean {
  return (
    hasArgumentsNotText(call) ||
    (isRecord(call) && isRecord(call.function) && doubleEncodedObject(call.function.arguments) !== undefined)
  );
}

function withTextArguments(call: unknown): unknown {
  if (!argumentsToRewrite(call)) return call;
  const record = call as Record<string, unknown> & { function: Record<string, unknown> };
  const inner = doubleEncodedObject(record.function.arguments);
  if (inner !== undefined) return { ...record, function: { ...record.function, arguments: inner } };
  const args = record.function.arguments;
  // JSON.stringify cannot write arguments nested some thousands of levels deep: they stand as a text
  // nested past the limit, which the tool loop refuses as it would their own (`unreadableArgumentsMiddleware`).
  // Written with the numbers' texts as the server sent them, so one a double does not hold (an id past 2^53)
  // is refused there too, not passed on rounded.
  const text =
    args === undefined ? "" : argumentsNestTooDeep(args) ? TOO_DEEP_ARGUMENTS_TEXT : stringifyJson(args);
  return { ...record, function: { ...record.function, arguments: text } };
}

import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Options = Record<string, Record<string, unknown> | undefined> | undefined;

/**
 * The fields of an assistant message in which a Chat Completions router gives a turn's reasoning as the
 * model's own API signed it: OpenRouter's `reasoning_details` (Gemini 3's thought signatures, an OpenAI
 * model's encrypted reasoning, Claude's signed thinking), LiteLLM's `thinking_blocks` (Claude's thinking
 * blocks with their signatures).
 */
const FIELDS = ["reasoning_details", "thinking_blocks"] as const;

/** Where a turn's parts keep those fields between turns (the SDK hands a part's metadata back as its options). */
const KEY = "svcTurn";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The fields of an answer's first choice's message that hold a non-empty list, if any. */
function fieldsOf(body: unknown): Record<string, unknown[]> | undefined {
  if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
  const first: unknown = body.choices[0];
  const message = isRecord(first) && isRecord(first.message) ? first.message : {};
  const found = FIELDS.flatMap((field) => {
    const value = message[field];
    return Array.isArray(value) && value.length > 0 ? [[field, value] as const] : [];
  });
  return found.length === 0 ? undefined : Object.fromEntries(found);
}

/** The fields one of an assistant message's parts carries, if any. */
function fieldsIn(message: Prompt[number]): Record<string, unknown> | undefined {
  if (message.role !== "assistant") return undefined;
  for (const part of message.content) {
    const fields = (part.providerOptions as Options)?.[KEY];
    if (fields !== undefined) return fields;
  }
  return undefined;
}

/**
 * The run's messages with each earlier turn's fields back on that turn, as the Chat Completions provider
 * sends a message's `openaiCompatible` options: as fields of the message itself.
 */
export function withTurnFields(prompt: Prompt): Prompt {
  return prompt.map((message) => {
    const fields = fieldsIn(message);
    if (fields === undefined) return message;
    const options = message.providerOptions as Options;
    return {
      ...message,
      providerOptions: { ...options, openaiCompatible: { ...fields, ...options?.openaiCompatible } },
    } as typeof message;
  });
}

/**
 * A turn's signed reasoning (`FIELDS`) goes back with the turn it came with, as written. OpenRouter refuses a
 * Gemini model's request whose earlier tool-calling turn comes back without its `reasoning_details`
 * ("Gemini models require OpenRouter reasoning details to be preserved in each request"), and Claude with
 * thinking on (a LiteLLM proxy set so) one whose tool-calling turn lacks its thinking blocks: every run
 * that called a tool failed on its next turn. The AI SDK reads no such field, so they ride on the turn's
 * parts (`KEY`) and are put back on its message. A server that writes none is sent none.
 */
export const turnFieldsMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({ ...params, prompt: withTurnFields(params.prompt) }),
  wrapGenerate: async ({ doGenerate }) => {
    const result = await doGenerate();
    const fields = fieldsOf(result.response?.body);
    if (fields === undefined) return result;
    const content = result.content.map((part) =>
      part.type === "text" || part.type === "reasoning" || part.type === "tool-call"
        ? // JSON, as the answer was parsed.
          { ...part, providerMetadata: { ...part.providerMetadata, [KEY]: fields as never } }
        : part,
    );
    return { ...result, content };
  },
};

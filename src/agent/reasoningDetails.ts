import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Options = Record<string, Record<string, unknown> | undefined> | undefined;

/** Where a turn's parts keep its details between turns (the SDK hands a part's metadata back as its options). */
const KEY = "openrouter";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The `reasoning_details` of an answer's first choice, when it has any. */
function detailsOf(body: unknown): unknown[] | undefined {
  if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
  const first: unknown = body.choices[0];
  const details = isRecord(first) && isRecord(first.message) ? first.message.reasoning_details : undefined;
  return Array.isArray(details) && details.length > 0 ? details : undefined;
}

/** The details one of an assistant message's parts carries, if any. */
function detailsIn(message: Prompt[number]): unknown {
  if (message.role !== "assistant") return undefined;
  for (const part of message.content) {
    const details = (part.providerOptions as Options)?.[KEY]?.reasoningDetails;
    if (details !== undefined) return details;
  }
  return undefined;
}

/**
 * The run's messages with each earlier turn's `reasoning_details` on that turn, as the Chat Completions
 * provider sends a message's `openaiCompatible` options: as fields of the message itself.
 */
export function withReasoningDetails(prompt: Prompt): Prompt {
  return prompt.map((message) => {
    const details = detailsIn(message);
    if (details === undefined) return message;
    const options = message.providerOptions as Options;
    if (options?.openaiCompatible?.reasoning_details !== undefined) return message;
    return {
      ...message,
      providerOptions: {
        ...options,
        openaiCompatible: { ...options?.openaiCompatible, reasoning_details: details },
      },
    } as typeof message;
  });
}

/**
 * OpenRouter's `reasoning_details` go back with the turn they came with, as written. OpenRouter gives a
 * reasoning model's turn its details (Gemini 3's thought signatures, an OpenAI model's encrypted reasoning,
 * Claude's signed thinking) and, for a Gemini model, refuses a request whose earlier tool-calling turn comes
 * back without them ("Gemini models require OpenRouter reasoning details to be preserved in each request"):
 * every run that called a tool failed on its next turn. The AI SDK reads no such field, so they ride on the
 * turn's parts (`KEY`) and are put back on its message. A server that writes none is sent none.
 */
export const reasoningDetailsMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({ ...params, prompt: withReasoningDetails(params.prompt) }),
  wrapGenerate: async ({ doGenerate }) => {
    const result = await doGenerate();
    const details = detailsOf(result.response?.body);
    if (details === undefined) return result;
    const content = result.content.map((part) =>
      part.type === "text" || part.type === "reasoning" || part.type === "tool-call"
        ? {
            ...part,
            providerMetadata: {
              ...part.providerMetadata,
              // JSON, as the answer was parsed.
              [KEY]: { reasoningDetails: details as never },
            },
          }
        : part,
    );
    return { ...result, content };
  },
};

import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

/** The provider-level prompt and middleware (`@ai-sdk/provider` is not a direct dependency). */
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

type Options = Record<string, Record<string, unknown> | undefined> | undefined;

const signatureIn = (options: Options, key: string): unknown => options?.[key]?.thoughtSignature;

/**
 * The run's messages with each earlier tool call's Gemini thought signature where the Chat Completions
 * provider sends it back. Gemini's OpenAI-compatible endpoint gives each tool call a signature
 * (`extra_content.google.thought_signature`) and, for Gemini 3 models, refuses a request whose earlier
 * call lacks it ("Function call is missing a thought_signature in functionCall parts"): every run that
 * called a tool failed on its next turn. The AI SDK keeps the signature under the provider's name
 * (`openai`, `providerKey`) but sends back the one under `google`; it is copied there.
 */
export function withThoughtSignatures(prompt: Prompt, providerKey: string): Prompt {
  return prompt.map((message) => {
    if (message.role !== "assistant") return message;
    const lacking = (part: (typeof message.content)[number]) =>
      part.type === "tool-call" &&
      signatureIn(part.providerOptions as Options, providerKey) !== undefined &&
      signatureIn(part.providerOptions as Options, "google") === undefined;
    if (!message.content.some(lacking)) return message;
    return {
      ...message,
      content: message.content.map((part) => {
        if (!lacking(part)) return part;
        const options = part.providerOptions as Options;
        const thoughtSignature = signatureIn(options, providerKey);
        return { ...part, providerOptions: { ...options, google: { ...options?.google, thoughtSignature } } };
      }),
    } as typeof message;
  });
}

/** `withThoughtSignatures` on every call of a Chat Completions model named `providerKey`. */
export function thoughtSignaturesMiddleware(providerKey: string): Middleware {
  return {
    specificationVersion: "v3",
    transformParams: async ({ params }) => ({
      ...params,
      prompt: withThoughtSignatures(params.prompt, providerKey),
    }),
  };
}

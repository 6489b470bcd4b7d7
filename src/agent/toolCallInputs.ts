import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

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

import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

/** The provider-level prompt and middleware (`@ai-sdk/provider` is not a direct dependency). */
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/** What the model is sent for a prompt that rendered to nothing (`{comment.body}` of an empty comment). */
export const EMPTY_PROMPT = "(the prompt is empty)";

const blank = (part: { type: string; text?: string }) =>
  part.type === "text" && (part.text ?? "").trim() === "";

/**
 * The run's messages as the Messages API takes them: it refuses the whole request for a text block that is
 * empty or only whitespace ("text content blocks must contain non-whitespace text"), which a rendered prompt
 * can be, and so can a turn in which the model wrote only a line break before its tool calls. Such blocks
 * are left out; a user message left with nothing says the prompt is empty.
 */
export function messagesApiPrompt(prompt: Prompt): Prompt {
  return prompt.map((message) => {
    if (message.role === "user") {
      if (!message.content.some(blank)) return message;
      const kept = message.content.filter((part) => !blank(part));
      return { ...message, content: kept.length > 0 ? kept : [{ type: "text", text: EMPTY_PROMPT }] };
    }
    if (message.role === "assistant") {
      if (!message.content.some(blank)) return message;
      const kept = message.content.filter((part) => !blank(part));
      return { ...message, content: kept.length > 0 ? kept : [{ type: "text", text: "(no text)" }] };
    }
    return message;
  });
}

/** `messagesApiPrompt` on every call of an `anthropic` model. */
export const messagesApiMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({ ...params, prompt: messagesApiPrompt(params.prompt) }),
};

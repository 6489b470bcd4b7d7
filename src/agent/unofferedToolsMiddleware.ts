import type { wrapLanguageModel } from "ai";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

type Prompt = Parameters<NonNullable<Middleware["transformParams"]>>[0]["params"]["prompt"];

/**
 * The error result of a call naming a tool the run was not offered, sent back to the model as `why` says
 * (`unofferedServerTools`: its server was not connected when the run began) instead of the AI SDK's
 * "unavailable tool" list, which would not tell the model that the tool exists and what keeps it away.
 * Other results are kept as they are.
 */
export function unofferedToolResults(prompt: Prompt, why: (name: string) => string | undefined): Prompt {
  let changed = false;
  const messages = prompt.map((message) => {
    if (message.role !== "tool") return message;
    const content = message.content.map((part) => {
      if (part.type !== "tool-result" || !part.output.type.startsWith("error")) return part;
      const reason = why(part.toolName);
      if (reason === undefined) return part;
      changed = true;
      return { ...part, output: { type: "error-text" as const, value: reason } };
    });
    return { ...message, content };
  });
  return changed ? messages : prompt;
}

/** `unofferedToolResults` on every model call of one run. */
export function unofferedToolsMiddleware(why: (name: string) => string | undefined): Middleware {
  return {
    specificationVersion: "v3",
    transformParams: async ({ params }) => ({ ...params, prompt: unofferedToolResults(params.prompt, why) }),
  };
}

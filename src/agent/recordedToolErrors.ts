import type { wrapLanguageModel } from "ai";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

type Prompt = Parameters<NonNullable<Middleware["transformParams"]>>[0]["params"]["prompt"];

/**
 * Each failed call's error result sent back to the model as the run recorded it (`errorOf`: scrubbed and held
 * to `agent.max_tool_result_chars`), where the AI SDK wrote its own: for a call no tool ran, its error quotes
 * what the model wrote (`Invalid input for tool x: JSON parsing failed: Text: <the arguments>`), which can be
 * as long as the model's whole answer and went to the model, and into the run's record, uncut. The errors of
 * calls a tool ran are the same text already. Other results are kept as they are.
 */
export function recordedToolErrors(prompt: Prompt, errorOf: (callId: string) => string | undefined): Prompt {
  let changed = false;
  const messages = prompt.map((message) => {
    if (message.role !== "tool") return message;
    const content = message.content.map((part) => {
      if (part.type !== "tool-result" || !part.output.type.startsWith("error")) return part;
      const recorded = errorOf(part.toolCallId);
      if (recorded === undefined || (part.output.type === "error-text" && part.output.value === recorded))
        return part;
      changed = true;
      return { ...part, output: { type: "error-text" as const, value: recorded } };
    });
    return { ...message, content };
  });
  return changed ? messages : prompt;
}

/** `recordedToolErrors` on every model call of one run. */
export function recordedToolErrorsMiddleware(errorOf: (callId: string) => string | undefined): Middleware {
  return {
    specificationVersion: "v3",
    transformParams: async ({ params }) => ({
      ...params,
      prompt: recordedToolErrors(params.prompt, errorOf),
    }),
  };
}

import type { wrapLanguageModel } from "ai";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

type Prompt = Parameters<NonNullable<Middleware["transformParams"]>>[0]["params"]["prompt"];

/** A failed call's result as the prompt carries it back to the model. */
interface ToolErrorResult {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The error's text when the AI SDK wrote it as text (`error-text`). */
  readonly text: string | undefined;
}

/**
 * The prompt with each failed call's error result replaced by `replacement`'s text (an `error-text`), where it
 * gives one; other results, and errors it leaves (`undefined`), are kept as they are. The prompt itself when
 * nothing changed.
 */
function replacedToolErrors(
  prompt: Prompt,
  replacement: (result: ToolErrorResult) => string | undefined,
): Prompt {
  let changed = false;
  const messages = prompt.map((message) => {
    if (message.role !== "tool") return message;
    const content = message.content.map((part) => {
      if (part.type !== "tool-result" || !part.output.type.startsWith("error")) return part;
      const text = part.output.type === "error-text" ? part.output.value : undefined;
      const value = replacement({ toolCallId: part.toolCallId, toolName: part.toolName, text });
      if (value === undefined || value === text) return part;
      changed = true;
      return { ...part, output: { type: "error-text" as const, value } };
    });
    return { ...message, content };
  });
  return changed ? messages : prompt;
}

/** `replacedToolErrors` on every model call of one run. */
function toolErrorsMiddleware(replacement: (result: ToolErrorResult) => string | undefined): Middleware {
  return {
    specificationVersion: "v3",
    transformParams: async ({ params }) => ({
      ...params,
      prompt: replacedToolErrors(params.prompt, replacement),
    }),
  };
}

/**
 * The error result of a call naming a tool the run was not offered, sent back to the model as `why` says
 * (`unofferedServerTools`: its server was not connected when the run began) instead of the AI SDK's
 * "unavailable tool" list, which would not tell the model that the tool exists and what keeps it away.
 */
export function unofferedToolsMiddleware(why: (name: string) => string | undefined): Middleware {
  return toolErrorsMiddleware((result) => why(result.toolName));
}

/**
 * Each failed call's error result sent back to the model as the run recorded it (`errorOf`: scrubbed and held
 * to `agent.max_tool_result_chars`), where the AI SDK wrote its own: for a call no tool ran, its error quotes
 * what the model wrote (`Invalid input for tool x: JSON parsing failed: Text: <the arguments>`), which can be
 * as long as the model's whole answer and went to the model, and into the run's record, uncut. The errors of
 * calls a tool ran are the same text already.
 */
export function recordedToolErrorsMiddleware(errorOf: (callId: string) => string | undefined): Middleware {
  return toolErrorsMiddleware((result) => errorOf(result.toolCallId));
}

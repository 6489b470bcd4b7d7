import type { wrapLanguageModel } from "ai";
import { endpointCutReason } from "./endpointCut.js";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/**
 * Each tool call of a model answer with an id no other call of the run has. Some Chat Completions servers
 * give every call of a turn the same id (Xinference: `call_<completion id>`), an empty one, or start again
 * at `call_0` each turn; the AI SDK pairs calls and results by id, so with a repeated id the calls after the
 * first were sent back to the model with the first one's arguments, and the run's log and journal listed one
 * call where several had run. A repeated or empty id gets a fresh one (`<id>_2`, `call_1`, ...); a unique id
 * is kept as the server wrote it (Mistral, for one, refuses ids not in its own format). `seen` holds the ids
 * of the run's earlier calls and is updated.
 */
export function uniqueToolCallIds<T extends { readonly type: string }>(
  content: readonly T[],
  seen: Set<string>,
): T[] {
  const idOf = (part: T) => (part as T & { toolCallId: string }).toolCallId;
  // The answer's own ids, each kept at its first call: a fresh id for another call never takes one of them
  // (`""` and `call_1` in one answer: the empty one is not named `call_1`, renaming the server's).
  const reserved = new Set<string>();
  for (const part of content)
    if (part.type === "tool-call" && idOf(part) !== "" && !seen.has(idOf(part))) reserved.add(idOf(part));
  return content.map((part) => {
    if (part.type !== "tool-call") return part;
    const id = idOf(part);
    if (reserved.delete(id)) {
      seen.add(id);
      return part;
    }
    let unique = id;
    for (let n = 1; unique === "" || seen.has(unique) || reserved.has(unique); n++)
      unique = id === "" ? `call_${n}` : `${id}_${n + 1}`;
    seen.add(unique);
    return { ...part, toolCallId: unique };
  });
}

/** `uniqueToolCallIds` on every answer of one run's model (a fresh middleware per run). */
export function uniqueToolCallIdsMiddleware(): Middleware {
  const seen = new Set<string>();
  return {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      return { ...result, content: uniqueToolCallIds(result.content, seen) };
    },
  };
}

/**
 * An answer with tool calls whose finish reason the AI SDK does not know (`eos_token` from Hugging Face TGI,
 * `null`, `end_turn` from other Chat Completions servers: mapped to `other`) counts as asking for them. The
 * SDK runs the tools of a turn only when it finished with `tool_calls` or `stop`, and ends the loop
 * otherwise, so such a run delivered its (often empty) text as done, the tools never run. Not a turn the
 * endpoint cut off itself (`endpointCutReason`).
 */
export const toolCallsFinishMiddleware: Middleware = {
  specificationVersion: "v3",
  wrapGenerate: async ({ doGenerate }) => {
    const result = await doGenerate();
    if (result.finishReason.unified !== "other" || !result.content.some((part) => part.type === "tool-call"))
      return result;
    // A turn the endpoint cut off itself (DeepSeek's insufficient_system_resource) is cut as at max_tokens: the
    // last call's arguments may be incomplete, so it stays one the SDK runs no tool of (`runToolLoop`).
    if (endpointCutReason(result.finishReason.raw) !== undefined) return result;
    return { ...result, finishReason: { ...result.finishReason, unified: "tool-calls" } };
  },
};

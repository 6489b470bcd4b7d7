/**
 * A Chat Completions message whose `content` is an array of parts, as some servers and gateways write it,
 * with that content as the one text the rest of `normalizedChatAnswer` reads (thinking at its start, a
 * refusal beside it); the AI SDK read only its `text` parts, and those as they were:
 * - `text` parts, and `output_text` ones (the Responses API's name, which gateways translating from it pass
 *   on), joined as the text (`null` when there is none);
 * - `refusal` parts joined as the message's `refusal` (where it has none of its own), delivered as the reply
 *   as OpenAI's `refusal` field is;
 * - Magistral's `thinking` parts (each a list of text chunks) as the message's reasoning, after any it has,
 *   as the SDK read them: not part of the reply, and back with the turn as `reasoning_content`.
 * Parts of other types are left out, as the SDK left them. Undefined when `content` is no array.
 */
export function withFlatContent(message: Record<string, unknown>): Record<string, unknown> | undefined {
  const { content } = message;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  const refusals: string[] = [];
  const thoughts: string[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if ((part.type === "text" || part.type === "output_text") && typeof part.text === "string")
      texts.push(part.text);
    else if (part.type === "refusal" && typeof part.refusal === "string") refusals.push(part.refusal);
    else if (part.type === "thinking" && Array.isArray(part.thinking))
      thoughts.push(chunksText(part.thinking));
  }
  const flat: Record<string, unknown> = { ...message, content: texts.length === 0 ? null : texts.join("") };
  const refusal = refusals.join("");
  if (refusal !== "" && !(typeof message.refusal === "string" && message.refusal !== ""))
    flat.refusal = refusal;
  const thinking = thoughts.join("");
  if (thinking !== "") {
    // The reasoning the SDK reads first: `reasoning_content`, else Groq's `reasoning`.
    const before = message.reasoning_content ?? message.reasoning;
    flat.reasoning_content = `${typeof before === "string" ? before : ""}${thinking}`;
  }
  return flat;
}

/** A `thinking` part's text chunks joined, as the SDK joined them. */
function chunksText(chunks: readonly unknown[]): string {
  return chunks
    .filter((chunk) => isRecord(chunk) && chunk.type === "text" && typeof chunk.text === "string")
    .map((chunk) => (chunk as { text: string }).text)
    .join("");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

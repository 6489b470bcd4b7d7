/**
 * Whether an endpoint's 400 says the prompt alone is more than the model's context holds, so no output limit
 * could help: the context's size in tokens when the refusal gives it, `null` when it does not, `undefined`
 * when the refusal is not that one.
 * - OpenAI's (Groq's, vLLM's before 0.8): `This model's maximum context length is 128000 tokens. However, you
 *   requested 134096 tokens (130000 in the messages, 4096 in the completion)`, the messages alone past it; or
 *   `However, your messages resulted in 130532 tokens`;
 * - vLLM's: `However, your request has 40000 input tokens`;
 * - OpenRouter's: `This endpoint's maximum context length is 163840 tokens. However, you requested about 171624
 *   tokens (167528 of text input, 4096 in the output)`, the input alone past it;
 * - llama.cpp's server: `the request exceeds the available context size` (`exceed_context_size_error`);
 * - the Messages API's: `prompt is too long: 215123 tokens > 200000 maximum`.
 * A refusal whose messages fit and whose output limit on top of them does not is not one.
 */
export function promptOverflow(body: string): number | null | undefined {
  if (/exceed_context_size_error|exceeds the available context size/.test(body)) return null;
  const messagesApi = /prompt is too long: \d+ tokens > (\d+) maximum/i.exec(body);
  if (messagesApi !== null) return Number(messagesApi[1]);
  if (/\bprompt is too long\b/i.test(body)) return null;
  const context = /maximum context length is (\d+) tokens/i.exec(body);
  if (context === null) return undefined;
  const size = Number(context[1]);
  const input =
    /\((\d+) in the messages\b/.exec(body) ??
    /\((\d+) of text input\b/.exec(body) ??
    /your messages resulted in (\d+) tokens/.exec(body) ??
    /your request has (\d+) input tokens/.exec(body);
  return input !== null && Number(input[1]) >= size ? size : undefined;
}

/**
 * The `anthropic-beta` values the AI SDK adds that svc never uses: `structured-outputs-2025-11-13`, sent
 * with every request that offers tools to a recent Claude model, though svc asks for no structured output
 * and marks no tool strict. Anthropic's own API takes it, but Google Vertex AI and Amazon Bedrock (and the
 * gateways in front of them that speak the Messages API) refuse the whole request: "Unexpected value(s)
 * `structured-outputs-2025-11-13` for the `anthropic-beta` header", "invalid beta flag".
 */
const UNUSED_BETA = /^structured-outputs-/i;

/** `headers` without the unused beta values (the header dropped when none is left); others unchanged. */
export function withoutUnusedBetas(
  headers: NonNullable<RequestInit["headers"]>,
): NonNullable<RequestInit["headers"]> {
  const copy = new Headers(headers);
  const betas = copy.get("anthropic-beta");
  if (betas === null) return headers;
  const kept = betas
    .split(",")
    .map((beta) => beta.trim())
    .filter((beta) => beta !== "" && !UNUSED_BETA.test(beta));
  if (kept.length === 0) copy.delete("anthropic-beta");
  else copy.set("anthropic-beta", kept.join(","));
  return copy;
}

/**
 * `headers` without an empty `x-api-key`: the AI SDK sends one when `agent.api_key` is left out (a local
 * Messages API server that needs no key), where no key is meant (an empty `api_key` is refused at load).
 */
export function withoutEmptyKey(
  headers: NonNullable<RequestInit["headers"]>,
): NonNullable<RequestInit["headers"]> {
  const copy = new Headers(headers);
  if (copy.get("x-api-key") !== "") return headers;
  copy.delete("x-api-key");
  return copy;
}

/** The fetch an `anthropic` model's requests go through: the global fetch, without the unused betas or an empty key. */
export const messagesApiFetch: typeof fetch = (input, init) =>
  globalThis.fetch(
    input,
    init?.headers === undefined
      ? init
      : { ...init, headers: withoutEmptyKey(withoutUnusedBetas(init.headers)) },
  );

/** A refusal of a request's form that the same request, rewritten, is taken in (a parameter's name). */
export interface RequestRewrite {
  /** Whether an error answer (its status and body text) is that refusal. */
  readonly refused: (status: number, body: string) => boolean;
  readonly rewrite: (body: string) => string;
}

/**
 * The fetch an `openai` model's requests go through: a successful JSON answer is passed through
 * `normalize` (which returns `undefined` to keep it as it is); every other answer is untouched. An error
 * answer that is `rewrite`'s refusal is followed by the request once more, rewritten; the endpoint is
 * remembered, and its later requests are sent rewritten at once.
 */
export function chatCompletionsFetch(
  normalize: (answer: unknown) => unknown,
  rewrite?: RequestRewrite,
): typeof fetch {
  const rewritten = new Set<string>();
  const send = (input: Parameters<typeof fetch>[0], init: RequestInit | undefined, key: string) =>
    rewrite !== undefined && rewritten.has(key) && typeof init?.body === "string"
      ? globalThis.fetch(input, { ...init, body: rewrite.rewrite(init.body) })
      : globalThis.fetch(input, init);
  return async (input, init) => {
    const key = input instanceof Request ? input.url : String(input);
    let response = await send(input, init, key);
    if (
      rewrite !== undefined &&
      !rewritten.has(key) &&
      response.status >= 400 &&
      response.status < 500 &&
      typeof init?.body === "string"
    ) {
      const refusal = await response
        .clone()
        .text()
        .catch(() => "");
      if (rewrite.refused(response.status, refusal)) {
        rewritten.add(key);
        response = await send(input, init, key);
      }
    }
    if (!response.ok || !/\bjson\b/i.test(response.headers.get("content-type") ?? "")) return response;
    const headers = new Headers(response.headers);
    // The body handed on is the decoded text.
    headers.delete("content-encoding");
    headers.delete("content-length");
    const kept = { status: response.status, statusText: response.statusText, headers };
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      // A body cut off (the connection dropped mid-answer) fails as the SDK's own read of it would.
      return new Response(new ReadableStream({ start: (controller) => controller.error(error) }), kept);
    }
    let fixed: unknown;
    try {
      fixed = normalize(JSON.parse(text));
    } catch {
      // Not JSON: the SDK reports the body as it is.
    }
    return new Response(fixed === undefined ? text : JSON.stringify(fixed), kept);
  };
}

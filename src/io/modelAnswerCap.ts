/**
 * The most bytes of one model answer svc reads (decoded, so a compressed body counts as what it unpacks to).
 * A real answer is smaller: 128k output tokens are under 1 MiB as JSON, and about 32 MiB as the event stream
 * some proxies answer with (a chunk of some 250 bytes per token); a body past this is not a model's answer
 * (a base_url naming a file server, a broken server or proxy), and reading it whole held it in memory
 * several times over, then delivered it as the reply.
 */
export const MAX_MODEL_ANSWER_BYTES = 64 * 1024 * 1024;

/** Why an answer's body stopped being read: it passed `MAX_MODEL_ANSWER_BYTES`. */
export class AnswerTooLarge extends Error {
  override readonly name = "AnswerTooLarge";
  constructor(limit: number) {
    super(
      `an answer of more than ${limit / (1024 * 1024)} MiB, read no further — no model answer is that large: check that agent.base_url is the model's API`,
    );
  }
}

/** Statuses whose answer has no body (`new Response` refuses one for them). */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * `response` with a body that fails with `AnswerTooLarge` once it has given `limit` bytes, and stops reading
 * the connection then; the status and headers are the same.
 */
export function cappedAnswer(response: Response, limit = MAX_MODEL_ANSWER_BYTES): Response {
  if (response.body === null || NULL_BODY.has(response.status)) return response;
  let read = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > limit) controller.error(new AnswerTooLarge(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The `AnswerTooLarge` `error` is, or was caused by (a body read's own error wraps it), if any. */
export function answerTooLarge(error: unknown): AnswerTooLarge | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof AnswerTooLarge) return cause;
    cause = cause.cause;
  }
  return undefined;
}

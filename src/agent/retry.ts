import { APICallError, wrapLanguageModel } from "ai";
import { DELAY_SECONDS, parseRetryAfter } from "../io/retryAfter.js";
import { headerOf, isProxyRefusal, isQuotaExhausted, isRefusedPort } from "./modelError.js";
import { modelTlsHint } from "./modelTlsHint.js";

/** The provider-level model `wrapLanguageModel` takes (`@ai-sdk/provider` is not a direct dependency). */
export type ProviderModel = Parameters<typeof wrapLanguageModel>[0]["model"];

/** Waits `ms`, or rejects when `signal` aborts first. */
export type Sleep = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** The longest a `Retry-After` is waited; a longer one is cut to this (the run's timeout still bounds it). */
export const MAX_RETRY_WAIT_MS = 60_000;
const FIRST_BACKOFF_MS = 1000;

export interface RetryOptions {
  readonly retries: number;
  readonly sleep?: Sleep;
  readonly now?: () => number;
  /** Called before each wait (the run logs it). */
  readonly onRetry?: (attempt: number, waitMs: number, error: unknown) => void;
}

/**
 * 429, 5xx, 408/409 and connection errors are worth another try; the SDK marks them retryable. A port fetch
 * refuses to call is not, nor an endpoint whose TLS certificate cannot be verified (or that speaks no TLS, or
 * refused the handshake with an alert, as one does that requires a client certificate or has no TLS version or
 * cipher in common with svc),
 * nor a request the outbound proxy refused (407, a CONNECT answered 403): the SDK takes them for
 * connection errors, but every try fails the same. Nor is OpenAI's 429 for an
 * account out of quota (`insufficient_quota`), which no wait changes. Groq's 400 for a tool call its model
 * wrote malformed (`tool_use_failed`) is, as another generation may pass. An answer's `x-should-retry: true`
 * or `false` (OpenAI and Anthropic send it, and their own SDKs obey it) decides over its status.
 */
export function isRetryable(error: unknown): boolean {
  if (!APICallError.isInstance(error)) return false;
  const told = headerOf(error.responseHeaders, "x-should-retry")?.trim().toLowerCase();
  return (
    (told === "true" || (told !== "false" && (error.isRetryable || isMalformedToolCall(error)))) &&
    !isRefusedPort(error) &&
    !isProxyRefusal(error) &&
    modelTlsHint(error) === "" &&
    !isQuotaExhausted(error)
  );
}

/**
 * Groq's 400 for a tool call its model wrote in a shape it could not parse (`"code": "tool_use_failed"`,
 * `Failed to call a function. Please adjust your prompt. See 'failed_generation' ...`): the request was
 * fine, the generation was not, and another one may pass.
 */
const MALFORMED_TOOL_CALL = /"code"\s*:\s*"tool_use_failed"/;

function isMalformedToolCall(error: APICallError): boolean {
  return error.statusCode === 400 && MALFORMED_TOOL_CALL.test(error.responseBody ?? "");
}

/**
 * How long to wait before retry number `attempt` (0-based): the server's `retry-after-ms` or
 * `Retry-After` (seconds or an HTTP date) when it sent one, else 1 s, 2 s, 4 s, ...
 */
export function retryDelayMs(error: unknown, attempt: number, now: () => number = Date.now): number {
  const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_RETRY_WAIT_MS);
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  if (headers === undefined) return backoff;
  const header = (name: string) => headerOf(headers, name);
  let ms: number | undefined;
  const afterMs = header("retry-after-ms")?.trim();
  if (afterMs !== undefined && DELAY_SECONDS.test(afterMs)) ms = Number(afterMs);
  if (ms === undefined) {
    const seconds = parseRetryAfter(header("retry-after") ?? null, now());
    if (seconds !== undefined) ms = seconds * 1000;
  }
  if (ms === undefined || Number.isNaN(ms)) return backoff;
  return Math.min(Math.max(0, ms), MAX_RETRY_WAIT_MS);
}

async function withRetries<T>(
  call: () => PromiseLike<T>,
  options: RetryOptions,
  signal: AbortSignal | undefined,
): Promise<T> {
  const sleep = options.sleep ?? realSleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= options.retries || !isRetryable(error) || signal?.aborted) throw error;
      const waitMs = retryDelayMs(error, attempt, options.now);
      options.onRetry?.(attempt + 1, waitMs, error);
      await sleep(waitMs, signal);
    }
  }
}

/**
 * The model with svc's own retries around each model call (the SDK's are turned off with
 * `maxRetries: 0`): the same rules, but the wait is injectable, so tests need no real clock.
 */
export function withRetryPolicy(model: ProviderModel, options: RetryOptions): ProviderModel {
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v3",
      wrapGenerate: ({ doGenerate, params }) => withRetries(doGenerate, options, params.abortSignal),
      wrapStream: ({ doStream, params }) => withRetries(doStream, options, params.abortSignal),
    },
  });
}

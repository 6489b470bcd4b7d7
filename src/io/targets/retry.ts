import { setTimeout as delay } from "node:timers/promises";
import { DeliveryError, type StepRunner } from "./target.js";

/** Agent-mode retry policy for transient failures (429, 5xx, connection errors, timeouts). */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly retries: number;
  readonly baseMs: number;
  readonly capMs: number;
  /** A Retry-After longer than this is not waited for: the delivery fails instead. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  retries: 3,
  baseMs: 1000,
  capMs: 30_000,
  maxRetryAfterMs: 300_000,
};

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = async (ms, signal) => {
  await delay(ms, undefined, signal === undefined ? {} : { signal });
};

/**
 * How long to wait before retry number `retry` (0-based): the platform's Retry-After when it gave one,
 * else base * 2^retry capped at `capMs`. Undefined means "do not retry". A wait of 0 (`Retry-After: 0`,
 * Telegram's `retry_after: 0`, an HTTP date already past by this machine's clock) gets the backoff: the
 * platform has just refused the request, and sent again at once each retry meets the same spent quota.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, err: unknown): number | undefined {
  if (!(err instanceof DeliveryError) || !err.transient || retry >= policy.retries) return undefined;
  if (err.retryAfterSeconds !== undefined && err.retryAfterSeconds > 0) {
    const ms = Math.ceil(err.retryAfterSeconds * 1000);
    return ms > policy.maxRetryAfterMs ? undefined : ms;
  }
  return Math.min(policy.capMs, policy.baseMs * 2 ** retry);
}

/**
 * A transient failure that is not retried, saying why: the retries ran out, or the platform asked for a
 * longer wait than a delivery waits. The failure's log line would otherwise read like any refusal (an
 * `HTTP 429` that the docs say is retried), leaving the operator to guess why it was not.
 */
function whyNotRetried(policy: RetryPolicy, retry: number, err: unknown): unknown {
  if (!(err instanceof DeliveryError) || !err.transient) return err;
  let why: string;
  if (retry >= policy.retries) {
    if (retry === 0) return err;
    why = `gave up after ${retry} ${retry === 1 ? "retry" : "retries"}`;
  } else if (err.retryAfterSeconds !== undefined) {
    why = `not retried: the platform asked to wait ${Math.ceil(err.retryAfterSeconds)} s, longer than the ${Math.round(policy.maxRetryAfterMs / 1000)} s a delivery waits`;
  } else return err;
  return new DeliveryError(`${err.message} — ${why}`, err.transient, err.retryAfterSeconds, err.answer);
}

export interface RetryNotice {
  readonly error: unknown;
  readonly retry: number;
  readonly delayMs: number;
}

/**
 * The wait before a retry, told how many attempts of its step were made so far (the retry's number), which
 * part of a split message that step sends (0 for a message sent whole) and the failure it retries.
 */
export type RetryWait = (
  ms: number,
  signal: AbortSignal | undefined,
  attempts: number,
  part: number,
  error: unknown,
) => Promise<void>;

/**
 * A step runner that retries transient DeliveryErrors with bounded exponential backoff. `attemptsMade`:
 * attempts made before (elsewhere: a delivery handed on by another instance) of part `madeOfPart`, which
 * the retries of the first step count on from when it sends that part; the other steps start at none.
 */
export function retryingSteps(
  policy: RetryPolicy,
  sleep: RetryWait,
  onRetry: (notice: RetryNotice) => void,
  signal?: AbortSignal,
  attemptsMade = 0,
  madeOfPart = 0,
): StepRunner {
  let first = true;
  return async <T>(step: () => Promise<T>, part = 0): Promise<T> => {
    const from = first && part === madeOfPart ? attemptsMade : 0;
    first = false;
    for (let retry = from; ; retry++) {
      try {
        return await step();
      } catch (err) {
        const delayMs = retryDelayMs(policy, retry, err);
        if (signal?.aborted) throw err;
        if (delayMs === undefined) throw whyNotRetried(policy, retry, err);
        onRetry({ error: err, retry, delayMs });
        await sleep(delayMs, signal, retry + 1, part, err);
      }
    }
  };
}

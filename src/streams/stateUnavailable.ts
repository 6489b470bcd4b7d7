import type { Outcome } from "./types.js";

/**
 * Thrown (rejected) by a shared state backend that cannot be reached (Redis down): the request is
 * answered 503 with Retry-After, never 202, since nothing it would promise could be kept.
 */
export class StateUnavailableError extends Error {
  override readonly name = "StateUnavailableError";
}

/** Seconds a sender is asked to wait before retrying while the shared state is unreachable. */
export const STATE_RETRY_AFTER_SECONDS = 5;

export const STATE_UNAVAILABLE: Outcome = {
  status: 503,
  body: { error: "State store unavailable, retry later" },
  headers: { "Retry-After": String(STATE_RETRY_AFTER_SECONDS) },
};

/** A value or a Promise of it: backends in memory answer synchronously, shared ones asynchronously. */
export type MaybePromise<T> = T | Promise<T>;

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}

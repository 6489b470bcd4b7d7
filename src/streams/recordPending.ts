import { StateUnavailableError } from "./stateUnavailable.js";
import type { Outcome } from "./types.js";

/**
 * Thrown (rejected) by a shared state backend for a duplicate whose original recorded its delivery id but
 * stored nothing under it (its instance killed in between, or still stuck): answered 503 with Retry-After
 * for as long as that record lasts, never `200 duplicate` for an event nothing stored and never a second
 * run beside an original that may still store it. Once the record is gone, the retry is a new delivery.
 */
export class RecordPendingError extends StateUnavailableError {
  constructor(readonly retryAfterSeconds: number) {
    super(`delivery id recorded but its event not stored; the record lasts ${retryAfterSeconds} s more`);
  }
}

export function recordPendingOutcome(err: RecordPendingError): Outcome {
  return {
    status: 503,
    body: { error: "This delivery id's event is not stored yet, retry later" },
    headers: { "Retry-After": String(err.retryAfterSeconds) },
  };
}

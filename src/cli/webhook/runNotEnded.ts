import type { HistoryRecord, RequestRecord } from "../../io/stores/deliveryHistory.js";
import { terminalText } from "../../io/terminalText.js";

/**
 * The note of a redelivery whose original's run has not ended, as far as this history shows: the original
 * was accepted for a run (202 accepted, not dropped on arrival) and no end of that run is recorded (it waits
 * in the run queue, saved for the next start, or runs, its delivery perhaps waiting to retry). The redelivery
 * then starts a second run beside it. Undefined otherwise, and with a shared state (Redis), where the
 * instance that took the run records its end in its own history.
 */
export function runNotEndedNote(
  original: RequestRecord,
  history: readonly HistoryRecord[],
  shared: boolean,
): string | undefined {
  if (shared || original.status !== 202 || original.outcome !== "accepted" || original.reason !== undefined)
    return undefined;
  const ended = history.some(
    (r) => r.kind === "run" && r.id === original.id && r.route === original.route && r.at >= original.at,
  );
  if (ended) return undefined;
  return terminalText(
    `Note: the run of ${original.id} has not ended (svc webhook deliveries shows no run for it yet: it waits in the run queue, is saved for the gateway's next start, or is running) — this redelivery starts a second run of the same event\n`,
  );
}

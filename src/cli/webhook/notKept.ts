import type { RequestRecord } from "../../io/stores/deliveryHistory.js";
import { terminalText } from "../../io/terminalText.js";

/**
 * Why a recorded request's payload cannot be redelivered, for `svc webhook redeliver`'s refusal. The
 * gateway marks what it read but did not keep; a request answered before its body was read (a 413 over
 * `max_body_bytes`, a 404) carries no mark, and is named by its answer rather than as "not recorded".
 */
export function payloadNotKept(
  record: Pick<RequestRecord, "status" | "outcome" | "payload_omitted" | "reason">,
): string {
  if (record.payload_omitted === "too_large") return "larger than 256 KiB";
  // The answer, with why the gateway gave it when the record kept that (a 401's reason), as deliveries says it.
  const answer = `${record.status} ${record.outcome}${record.reason === undefined ? "" : ` — ${terminalText(record.reason)}`}`;
  if (record.status === 413)
    return `answered ${answer} before its body was read: it was over platforms.webhook.max_body_bytes`;
  if (record.payload_omitted === "not_accepted" || record.status < 200 || record.status >= 300)
    return `the route did not accept the request: ${answer}`;
  return "not recorded";
}

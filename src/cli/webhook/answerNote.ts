import type { LocalAnswer } from "../../io/localHttp.js";
import { terminalText } from "../../io/terminalText.js";
import { shellWord } from "./checks.js";
import type { AnsweringRoute } from "./postToGateway.js";

/**
 * The note `svc webhook test` and `redeliver` write after a failed direct delivery: the gateway answers it
 * `502 Delivery failed` and gives the reason only in its log (a sender must not learn a platform's error),
 * so the note says where to read it, with the delivery ID its lines carry (a redelivery's holds the
 * sender's ID: its control and bidi characters are shown escaped, as `deliveries` shows them).
 */
export function failedDeliveryNote(
  answer: Pick<LocalAnswer, "status">,
  deliveryId: string | undefined,
  name: string,
  route: Pick<AnsweringRoute, "deliver" | "deliver_only">,
  gatewayLog: string,
): string | undefined {
  if (answer.status !== 502 || route.deliver_only !== true) return undefined;
  const grep =
    deliveryId === undefined ? "" : `: grep -F -- ${shellWord(deliveryId)} ${shellWord(gatewayLog)}`;
  return terminalText(
    `Note: the gateway could not deliver ${name}'s message to ${route.deliver}; the answer gives no reason (a sender must not see the platform's error), the gateway's log does${grep}\n`,
  );
}

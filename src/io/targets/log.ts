import type { DeliveryTarget, TargetDeps } from "./target.js";

/** `deliver: log` — the reply goes to the gateway log. */
export function logTarget({ logger }: TargetDeps): DeliveryTarget {
  return {
    name: "log",
    async send(message) {
      logger.info(
        { route: message.route, delivery_id: message.deliveryId },
        `[webhook] ${message.route} reply:\n${message.text}`,
      );
      return {};
    },
  };
}

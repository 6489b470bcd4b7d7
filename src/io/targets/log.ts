import { logInfo } from "../log.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";

/** `deliver: log` — the reply goes to the gateway log. */
export function logTarget({ logger }: TargetDeps): DeliveryTarget {
  return {
    name: "log",
    inProcess: true,
    async send(message) {
      // Skip building the line when INFO is off (a busy gateway at WARN runs thousands of these a second).
      if (logger.isLevelEnabled("info"))
        logInfo(
          logger,
          // A named profile's: two profiles' jobs of one name (cron:<name>) reply under one route name.
          message.profile === undefined
            ? { route: message.route, delivery_id: message.deliveryId }
            : { route: message.route, delivery_id: message.deliveryId, profile: message.profile },
          `[webhook] ${message.route} reply:\n${message.text}`,
        );
      return {};
    },
  };
}

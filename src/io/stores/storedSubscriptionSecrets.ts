import { subscriptionSecretValues } from "../../config/webhookSecrets.js";
import { subscriptionStore } from "./subscriptions.js";

/**
 * The secrets of the subscriptions in `file`, for a run outside the gateway (`svc cron run`) to hide as the
 * gateway's runs do; none when the file cannot be read (the run itself does not depend on it).
 */
export function storedSubscriptionSecrets(file: string): string[] {
  try {
    const records = Object.values(subscriptionStore(file).read().records);
    return subscriptionSecretValues(
      records.map((record) => {
        const secret = (record as { secret?: unknown } | null)?.secret;
        return { secret: typeof secret === "string" ? secret : undefined };
      }),
    );
  } catch {
    return [];
  }
}

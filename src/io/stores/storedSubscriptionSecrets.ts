import { storedRecordSecrets } from "../../config/webhookSecrets.js";
import { subscriptionStore } from "./subscriptions.js";

/**
 * The secrets of the subscriptions in `file`, for a run outside the gateway (`svc cron run`) to hide as the
 * gateway's runs do; none when the file cannot be read (the run itself does not depend on it).
 */
export function storedSubscriptionSecrets(file: string): string[] {
  try {
    return storedRecordSecrets(subscriptionStore(file).read().records);
  } catch {
    return [];
  }
}

import type { LoadedConfig } from "../config/load.js";
import { storedRecordSecrets } from "../config/webhookSecrets.js";
import { describeError } from "../errors.js";
import { storedSubscriptionSecrets } from "../io/stores/storedSubscriptionSecrets.js";
import { openSubscriptionStore } from "./webhook/subscriptionStoreFor.js";

/**
 * The secrets of every stored subscription, disabled ones included, for a run outside the gateway (`svc cron
 * run`, `svc mcp call`'s sampling) to hide as the gateway's runs do: from webhook_subscriptions.json, or with
 * `state.backend: redis` from the Redis every gateway serves them from (the file is not used there). A store
 * that cannot be read leaves none, and a Redis that does not answer is said on stderr: the run does not
 * depend on it, but its output may then show such a secret.
 */
export async function subscriptionSecrets(loaded: LoadedConfig): Promise<string[]> {
  if (loaded.config.state.backend !== "redis") return storedSubscriptionSecrets(loaded.paths.subscriptions);
  try {
    const store = await openSubscriptionStore(loaded);
    try {
      return storedRecordSecrets((await store.read()).records);
    } finally {
      store.close();
    }
  } catch (err) {
    process.stderr.write(
      `Warning: the subscriptions in Redis could not be read (${describeError(err)}): a subscription's secret this run's output quotes is not hidden — check state.redis_url\n`,
    );
    return [];
  }
}

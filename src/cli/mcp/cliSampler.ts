import { createRunner } from "../../actors/agent/index.js";
import { agentSampler } from "../../actors/mcp/gatewayHub.js";
import type { SamplingRunner } from "../../actors/mcp/serverRequests.js";
import type { LoadedConfig } from "../../config/load.js";
import { webhookSecretValues } from "../../config/webhookSecrets.js";
import { loadedCredentials } from "../../io/loadedCredentials.js";
import type { Logger } from "../../io/log.js";

/**
 * The agent that answers the sampling requests of the servers a command connects, as the gateway's does,
 * made at the first such request. What it returns hides the webhook secrets and `subscriptions` (the stored
 * subscriptions' secrets: subscriptionSecrets).
 */
export function cliSampler(
  loaded: LoadedConfig,
  subscriptions: readonly string[],
  logger: Logger,
): SamplingRunner {
  let runner: ReturnType<typeof createRunner> | undefined;
  return agentSampler(() => {
    if (runner === undefined) {
      const credentials = Object.freeze(loadedCredentials(loaded.config, loaded.scope));
      runner = createRunner(loaded.config.agent, {
        logger,
        hiddenValues: () => [...webhookSecretValues(loaded.config), ...subscriptions],
        dotenv: loaded.scope.secrets,
        credentials: () => credentials,
      });
    }
    return runner;
  });
}

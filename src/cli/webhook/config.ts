import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { webhookOffReason } from "../../config/webhookEnabled.js";

/** How to turn the adapter on from the CLI (the environment wins over .env and config.yaml). */
export function cliHowToEnable(loaded: LoadedConfig): string {
  return loaded.enabledFrom.startsWith("environment variable")
    ? "set WEBHOOK_ENABLED=true in the environment (it overrides .env and config.yaml)"
    : "svc gateway setup --enable";
}

/** The config, with a note on stderr when the webhook adapter is off (subscriptions would reach nothing). */
export function configWithEnabledNote(): LoadedConfig {
  const loaded = loadConfig();
  if (!loaded.config.platforms.webhook.enabled) {
    process.stderr.write(
      `Note: the webhook adapter is not enabled (${webhookOffReason(loaded)}); ` +
        `subscriptions are stored but nothing receives them until you enable it: ${cliHowToEnable(loaded)}\n`,
    );
  }
  return loaded;
}

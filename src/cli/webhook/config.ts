import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { webhookKeyPath } from "../../io/yamlEdit.js";

/** The config, with a note on stderr when the webhook adapter is off (subscriptions would reach nothing). */
export function configWithEnabledNote(): LoadedConfig {
  const loaded = loadConfig();
  if (!loaded.config.platforms.webhook.enabled) {
    // The environment wins over .env and config.yaml: `svc gateway setup --enable` cannot turn it on then.
    const how = loaded.enabledFrom.startsWith("environment variable")
      ? "set WEBHOOK_ENABLED=true in the environment (it overrides .env and config.yaml)"
      : "svc gateway setup --enable";
    process.stderr.write(
      `Note: the webhook adapter is not enabled (${loaded.enabledFrom} ${enabledIsSet(loaded) ? "is false" : "is not set, and false is its default in a config.yaml"}); ` +
        `subscriptions are stored but nothing receives them until you enable it: ${how}\n`,
    );
  }
  return loaded;
}

/** Whether config.yaml writes `enabled` at all (where it decided): "is false" would point at a missing line. */
function enabledIsSet(loaded: LoadedConfig): boolean {
  if (!loaded.fromFile || !loaded.enabledFrom.startsWith(`${loaded.paths.config}:`)) return true;
  try {
    return parseDocument(readFileSync(loaded.paths.config, "utf8")).hasIn(
      webhookKeyPath(loaded.paths.config, "enabled"),
    );
  } catch {
    return true;
  }
}

import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { webhookOffReason } from "../../config/webhookEnabled.js";
import { redisLabel } from "../../io/state/redis/connection.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../../io/state/redis/keys.js";
import { listeningGateway, type RunningAddress, runningAddress } from "./address.js";

/** How to turn the adapter on from the CLI (the environment wins over .env and config.yaml). */
export function cliHowToEnable(loaded: LoadedConfig): string {
  return loaded.enabledFrom.startsWith("environment variable")
    ? "set WEBHOOK_ENABLED=true in the environment (it overrides .env and config.yaml)"
    : "svc gateway setup --enable";
}

/**
 * What a `svc webhook` command says where the webhook adapter is off. With `state.backend: redis` the
 * subscriptions are shared: the gateways on that Redis whose adapter is on serve them, whatever this host's
 * config.yaml says (an admin host's, or a worker instance's), so nothing is said to be unserved. Nor where
 * this SVC_HOME's gateway runs and listens (`running`): it was started with the adapter on (WEBHOOK_ENABLED
 * in its own environment, a systemd unit's or a container's, which this command does not see), and serves
 * them until it restarts under what this command reads.
 */
export function adapterOffNote(loaded: LoadedConfig, running: RunningAddress = {}): string {
  const reason = webhookOffReason(loaded);
  const listening = listeningGateway(running);
  if (listening !== undefined)
    return `Note: the webhook adapter is off in this command's configuration (${reason}), but the running gateway (pid ${listening.pid}) listens on ${listening.host}:${listening.port} and serves the subscriptions: it was started with the adapter on (WEBHOOK_ENABLED=true in its own environment, or a config.yaml changed since) — a restart under this config.yaml and this environment would turn it off; to keep it on: ${cliHowToEnable(loaded)}\n`;
  const { state } = loaded.config;
  if (state.backend === "redis") {
    const store = `${redisKeys(state.redis_key_prefix ?? DEFAULT_KEY_PREFIX).subscriptions()} in Redis at ${redisLabel(state.redis_url ?? "")}`;
    return `Note: the webhook adapter is off here (${reason}), so a gateway started with this configuration serves no webhook; the subscriptions in ${store} are served by the gateways sharing that Redis whose adapter is on\n`;
  }
  return `Note: the webhook adapter is not enabled (${reason}); subscriptions are stored but nothing receives them until you enable it: ${cliHowToEnable(loaded)}\n`;
}

/**
 * The config, with a note on stderr when the webhook adapter is off (subscriptions would reach nothing,
 * unless this SVC_HOME's gateway runs with it on: the note says so then).
 */
export async function configWithEnabledNote(): Promise<LoadedConfig> {
  const loaded = loadConfig();
  if (!loaded.config.platforms.webhook.enabled)
    process.stderr.write(adapterOffNote(loaded, await runningAddress(loaded)));
  return loaded;
}

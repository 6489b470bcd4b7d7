import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { howToEnableWebhook, type LoadedConfig } from "./load.js";
import { settingKey } from "./sections/webhook.js";

/**
 * Why the webhook adapter is off, worded the same by the CLI and the gateway log: `<where> is false`
 * when a line says so, or `<key> is not set, and false is its default in a config.yaml` when a
 * config.yaml exists but leaves `enabled` out (the embedded default without a file has it on).
 */
export function webhookOffReason(loaded: LoadedConfig): string {
  return `${loaded.enabledFrom} ${enabledIsSet(loaded) ? "is false" : "is not set, and false is its default in a config.yaml"}`;
}

/** Whether the setting that decided is written at all: "is false" would point at a missing line. */
function enabledIsSet(loaded: LoadedConfig): boolean {
  if (!loaded.fromFile || !loaded.enabledFrom.startsWith(`${loaded.paths.config}:`)) return true;
  return webhookKeyWritten(loaded, "enabled");
}

/**
 * `platforms.webhook.host is <host> (<config.yaml>)` when the file writes it, else that the file leaves it
 * out and the host is its default: a message must not send the user to look for a line that is not there.
 */
export function webhookHostSetting(loaded: LoadedConfig): string {
  const { webhook } = loaded.config.platforms;
  const { host } = webhook;
  return !loaded.fromFile || webhookKeyWritten(loaded, "host")
    ? `${settingKey(webhook, "host")} is ${host} (${loaded.paths.config})`
    : `platforms.webhook.host is not set in ${loaded.paths.config}, and ${host} is its default`;
}

/** Whether config.yaml writes `platforms.webhook.<key>` (or under `extra`); unreadable: taken as written. */
function webhookKeyWritten(loaded: LoadedConfig, key: string): boolean {
  try {
    const doc = parseDocument(readFileSync(loaded.paths.config, "utf8"));
    return doc.hasIn(["platforms", "webhook", key]) || doc.hasIn(["platforms", "webhook", "extra", key]);
  } catch {
    return true;
  }
}

/**
 * Why a gateway would have nothing to run (the adapter off, no MCP servers, no cron job in any profile's
 * store), or undefined. `cronJobsStored` is asked only when the rest leaves nothing. With
 * `state.backend: redis` there is always the shared queue: the runs other instances accepted.
 */
export function nothingToRun(loaded: LoadedConfig, cronJobsStored: () => boolean): string | undefined {
  const { config } = loaded;
  if (config.platforms.webhook.enabled || Object.keys(config.mcp_servers).length > 0) return undefined;
  if (config.state.backend === "redis") return undefined;
  if (cronJobsStored()) return undefined;
  return `${webhookOffReason(loaded)} — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run. ${howToEnableWebhook(loaded)}; or, for a gateway without webhooks, store a cron job (svc cron create) or add an MCP server (svc mcp add)`;
}

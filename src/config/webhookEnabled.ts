import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { howToEnableWebhook, type LoadedConfig } from "./load.js";

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
  try {
    const doc = parseDocument(readFileSync(loaded.paths.config, "utf8"));
    return (
      doc.hasIn(["platforms", "webhook", "enabled"]) ||
      doc.hasIn(["platforms", "webhook", "extra", "enabled"])
    );
  } catch {
    return true;
  }
}

/**
 * Why a gateway would have nothing to run (the adapter off, no MCP servers, no cron job in any profile's
 * store), or undefined. `cronJobsStored` is asked only when the rest leaves nothing.
 */
export function nothingToRun(loaded: LoadedConfig, cronJobsStored: () => boolean): string | undefined {
  const { config } = loaded;
  if (config.platforms.webhook.enabled || Object.keys(config.mcp_servers).length > 0) return undefined;
  if (cronJobsStored()) return undefined;
  return `${webhookOffReason(loaded)} — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run. ${howToEnableWebhook(loaded)}`;
}

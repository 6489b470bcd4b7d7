import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import type { LoadedConfig } from "./load.js";

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

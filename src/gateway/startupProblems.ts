import type { Config } from "../config/schema.js";
import { withHost } from "../config/sections/webhook.js";
import { webhookStartupProblems } from "../config/validate.js";
import { refusedTargets, targetStartupProblems } from "../io/targets/validate.js";

/**
 * Every reason the gateway refuses to start with `config` (the route rules of docs/webhook.md, a route whose
 * delivery target cannot work), judged for the address it will bind (`host`, e.g. from `--host`).
 * `svc gateway setup` runs the same check, so it never says "start the gateway" for a config that won't.
 */
export function startupProblems(config: Config, file: string, host?: string): string[] {
  const webhook = config.platforms.webhook;
  const check = {
    ...config,
    platforms: { ...config.platforms, webhook: withHost(webhook, host ?? webhook.host) },
  };
  return [...webhookStartupProblems(check, file), ...refusedTargets(targetStartupProblems(check, file))];
}

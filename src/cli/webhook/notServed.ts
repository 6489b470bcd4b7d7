import { isLoopbackHost } from "../../config/host.js";
import type { LoadedConfig } from "../../config/load.js";
import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import { webhookHostSetting } from "../../config/webhookEnabled.js";
import { parseSubscription } from "../../io/stores/subscriptions.js";

/**
 * Why the gateway would not serve this stored record although it may be enabled (invalid, no secret at
 * all, INSECURE_NO_AUTH off loopback); undefined when it would be served.
 */
export function notServed(
  loaded: LoadedConfig,
  path: string,
  name: string,
  raw: unknown,
): string | undefined {
  const parsed = parseSubscription(path, name, raw);
  if (!parsed.ok) return `the record is invalid — fix it in ${path}:\n${parsed.problems.join("\n")}`;
  const webhook = loaded.config.platforms.webhook;
  const setSecret = `set one with svc webhook subscribe ${name} --secret <secret>`;
  if (parsed.value.secret === undefined && webhook.secret === undefined)
    return `it has no secret of its own and there is no global secret (platforms.webhook.secret or WEBHOOK_SECRET) — ${setSecret}`;
  if (parsed.value.secret === INSECURE_NO_AUTH && !isLoopbackHost(webhook.host))
    return `its secret is INSECURE_NO_AUTH, which is served only on a loopback bind, but ${webhookHostSetting(loaded)} — ${setSecret}`;
  return undefined;
}

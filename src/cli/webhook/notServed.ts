import { isLoopbackHost } from "../../config/host.js";
import type { LoadedConfig } from "../../config/load.js";
import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import { webhookHostSetting } from "../../config/webhookEnabled.js";
import { gatewayStateFile } from "../../io/gatewayState.js";
import { parseSubscription } from "../../io/stores/subscriptions.js";
import type { Address } from "./address.js";

/**
 * Why the gateway would not serve this stored record although it may be enabled (invalid, no secret at
 * all, INSECURE_NO_AUTH off loopback); undefined when it would be served. `running`: the running
 * gateway's address (`runningAddress`), whose bind — `svc gateway start --host 0.0.0.0` over a loopback
 * config — is what the gateway judges INSECURE_NO_AUTH by.
 */
export function notServed(
  loaded: LoadedConfig,
  path: string,
  name: string,
  raw: unknown,
  running: Address = {},
): string | undefined {
  const parsed = parseSubscription(path, name, raw);
  if (!parsed.ok) return `the record is invalid — fix it in ${path}:\n${parsed.problems.join("\n")}`;
  const webhook = loaded.config.platforms.webhook;
  const setSecret = `set one with svc webhook subscribe ${name} --secret <secret>`;
  if (parsed.value.secret === undefined && webhook.secret === undefined)
    return `it has no secret of its own and there is no global secret (platforms.webhook.secret or WEBHOOK_SECRET) — ${setSecret}`;
  if (parsed.value.secret !== INSECURE_NO_AUTH) return undefined;
  const served = "its secret is INSECURE_NO_AUTH, which is served only on a loopback bind";
  // The running gateway's bind decides (a `--host` given at its start wins over the config), else the config's.
  if (isLoopbackHost(running.host ?? webhook.host)) return undefined;
  return running.host !== undefined && running.host !== webhook.host
    ? `${served}, but the running gateway binds to ${running.host} (started with --host ${running.host}, ${gatewayStateFile(loaded.paths)}) — ${setSecret}, or restart the gateway on loopback: svc gateway stop, then svc gateway start`
    : `${served}, but ${webhookHostSetting(loaded)} — ${setSecret}`;
}

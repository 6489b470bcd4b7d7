import { bindsEveryInterface } from "../config/host.js";
import { listenAddress } from "../io/http/listenHint.js";
import { parseSubscription, subscriptionStore } from "../io/stores/subscriptions.js";

/** Route names as a warning lists them: the first ten, then `…`. */
export function shownNames(names: readonly string[]): string {
  return names.length > 10 ? `${names.slice(0, 10).join(", ")}, …` : names.join(", ");
}

/**
 * A listener on every interface is reachable from the network: said at each start, with the fix. The fix
 * names what decided the address: `hostKey`, the key as written (`platforms.webhook.extra.host` when it
 * is under `extra`, whose value wins over a `host` written directly), or `--host`, which overrides both.
 */
export function allInterfacesWarning(
  host: string,
  port: number,
  hostKey = "platforms.webhook.host",
): string | undefined {
  if (!bindsEveryInterface(host)) return undefined;
  const fix =
    hostKey === "--host"
      ? "give --host 127.0.0.1 (it overrides platforms.webhook.host)"
      : `set ${hostKey}: 127.0.0.1`;
  return `[webhook] Listening on every network interface (${listenAddress(host, port)}): anyone who can reach this machine can post to its routes — ${fix} to accept senders on this machine only, or keep it and make sure every route has a secret`;
}

/**
 * A reload whose file moves the listener onto every interface from the next restart on: said then, not only
 * by that restart. It is how a file created beside a gateway started on the embedded default (loopback)
 * reads when it sets no host, since a `config.yaml` without one binds 0.0.0.0.
 */
export function allInterfacesAfterRestartWarning(
  host: string,
  port: number,
  hostKey: string,
  runningHost: string,
): string | undefined {
  if (!bindsEveryInterface(host) || bindsEveryInterface(runningHost)) return undefined;
  return `[webhook] after a restart the gateway listens on every network interface (${listenAddress(host, port)}; it listens on ${runningHost} until then): ${hostKey} is ${host}, which is also its default in a config.yaml that sets none — anyone who can reach this machine could then post to its routes: set ${hostKey}: 127.0.0.1 to keep accepting senders on this machine only, or keep it and make sure every route has a secret`;
}

/** The enabled (or, with `enabled` false, the disabled) dynamic subscriptions in `file` (none when it is missing or unreadable). */
export function enabledSubscriptions(file: string, enabled = true): string[] {
  try {
    const { records } = subscriptionStore(file).read();
    return Object.entries(records)
      .filter(([name, raw]) => {
        const parsed = parseSubscription(file, name, raw);
        return parsed.ok && parsed.value.enabled === enabled;
      })
      .map(([name]) => name);
  } catch {
    return [];
  }
}

/**
 * Subscriptions made earlier that an adapter turned off leaves unserved: said loudly, not silently dropped.
 * With `shared` (`state.backend: redis`) they are served by the gateways sharing that Redis whose adapter
 * is on, which this one cannot see: it says only that it serves none of them (a worker instance's start).
 */
export function unservedSubscriptionsWarning(
  names: readonly string[],
  file: string,
  offReason: string,
  howToEnable: string,
  shared = false,
): string | undefined {
  if (shared && names.length > 0)
    return `[webhook] ${names.length} enabled subscription(s) in ${file} (${shownNames(names)}) are not served by this gateway: its webhook adapter is off (${offReason}); the gateways sharing that Redis whose adapter is on serve them. To serve them here too: ${howToEnable}`;
  return unservedWarning("enabled subscription(s)", names, file, offReason, howToEnable);
}

/**
 * config.yaml's own routes, which an adapter turned off leaves unserved (404 to nobody: nothing listens).
 * With `shared` (`state.backend: redis`) the instances whose adapter is on accept their events, and this
 * one (a worker) runs the runs it takes from the shared queue with these routes' settings.
 */
export function unservedRoutesWarning(
  names: readonly string[],
  file: string,
  offReason: string,
  howToEnable: string,
  shared = false,
): string | undefined {
  if (shared && names.length > 0)
    return `[webhook] ${names.length} route(s) in ${file} (${shownNames(names)}) are not served by this gateway: its webhook adapter is off (${offReason}); the gateways sharing that Redis whose adapter is on accept their events, and this one runs the runs it takes from the shared queue with these routes' settings. To serve them here too: ${howToEnable}`;
  return unservedWarning("route(s)", names, file, offReason, howToEnable);
}

function unservedWarning(
  what: string,
  names: readonly string[],
  file: string,
  offReason: string,
  howToEnable: string,
): string | undefined {
  if (names.length === 0) return undefined;
  return `[webhook] ${names.length} ${what} in ${file} (${shownNames(names)}) are not served: the webhook adapter is off (${offReason}). ${howToEnable}`;
}

import { bindsEveryInterface } from "../../config/host.js";
import type { LoadedConfig } from "../../config/load.js";
import { DEFAULT_PROFILE } from "../../config/paths.js";
import { settingKey } from "../../config/sections/webhook.js";
import { gatewayAddress, gatewayStateFile, readGatewayState } from "../../io/gatewayState.js";
import { runningGateway } from "../gatewayLookup.js";

/** Where the gateway listens: the running one's address (`--host`/`--port` may differ from the config). */
export interface Address {
  readonly host?: string;
  readonly port?: number;
}

/** Where a sender reaches a route: the given or configured bind, with a wildcard bind shown as loopback. */
export function subscriptionUrl(
  loaded: LoadedConfig,
  name: string,
  profile: string | undefined,
  address: Address = {},
): string {
  const webhook = loaded.config.platforms.webhook;
  const bind = address.host ?? webhook.host;
  const host = bindsEveryInterface(bind) ? "127.0.0.1" : bind;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return `http://${hostPart}:${address.port ?? webhook.port}${routePath(loaded, name, profile)}`;
}

/** The path a route bound to `profile` answers at: `/p/<profile>` before it with multiplexing on. */
export function routePath(loaded: LoadedConfig, name: string, profile: string | undefined): string {
  const prefix =
    loaded.config.gateway.multiplex_profiles && profile !== undefined && profile !== DEFAULT_PROFILE
      ? `/p/${profile}`
      : "";
  return `${prefix}/webhooks/${name}`;
}

/**
 * Where a config.yaml route answers when a subscription of its name is bound to another profile with
 * multiplexing on (its path is not the subscription's, which then gets 404 Unknown route): the words that say
 * so (`bound to profile alpha, it answers at /p/alpha/webhooks/ra (...)`) and the subscription's path.
 * Undefined when the two paths are the same (the route answers there, checking its own secret).
 */
export function elsewhereRoute(
  loaded: LoadedConfig,
  name: string,
  routeProfile: string | undefined,
  subscriptionProfile: string | undefined,
): { readonly answers: string; readonly subscriptionAt: string } | undefined {
  const routeAt = routePath(loaded, name, routeProfile);
  const subscriptionAt = routePath(loaded, name, subscriptionProfile);
  if (routeAt === subscriptionAt) return undefined;
  const bound = routeProfile === undefined ? "unbound" : `bound to profile ${routeProfile}`;
  return { answers: `${bound}, it answers at ${routeAt} (gateway.multiplex_profiles is on)`, subscriptionAt };
}

/** The running gateway when it has begun to stop (its listener closed, runs draining): its pid, and since when. */
export interface Stopping {
  readonly pid: number;
  readonly since: string;
}

/**
 * The address of the running gateway (`svc gateway start` or `run`), when there is one. One that runs MCP
 * servers only (webhook adapter off) records port 0: it has no address, `withoutListener` names its pid.
 * One that is stopping says so (`stopping`): it takes no new requests, but it runs. One whose pid is of
 * another PID namespace (a container and its host sharing SVC_HOME) runs when its /health answers at the
 * address its gateway.json records (`runningGateway`).
 */
export async function runningAddress(loaded: LoadedConfig): Promise<RunningAddress> {
  const running = await runningGateway(loaded.paths);
  if (running === undefined) return {};
  const { pid } = running;
  const state = readGatewayState(gatewayStateFile(loaded.paths));
  const recorded = state?.pid === pid;
  const address = recorded ? { host: state.host, port: state.port } : gatewayAddress(loaded.paths, pid);
  if (address.port === 0) return { withoutListener: pid };
  const since = recorded ? state.stopping_since : undefined;
  const found = { ...address, pid, recorded };
  return since === undefined ? found : { ...found, stopping: { pid, since } };
}

/** What `runningAddress` finds: nothing (no gateway runs), a gateway without a listener, or one's address. */
export type RunningAddress = Address & {
  /** The running gateway's, when it has an address. */
  readonly pid?: number;
  /**
   * The address is the one its `gateway.json` records (false: that file is unreadable or of another pid —
   * the gateway is still writing it — and the address is the configuration's, which says nothing of what
   * the running gateway listens on).
   */
  readonly recorded?: boolean;
  readonly withoutListener?: number;
  readonly stopping?: Stopping;
};

/**
 * The pid and address of this SVC_HOME's running gateway when it listens for webhooks and takes requests
 * (not stopping), whatever this command's configuration says of the adapter: it was started with it on.
 */
export function listeningGateway(
  running: RunningAddress,
): { readonly pid: number; readonly host: string; readonly port: number } | undefined {
  const { pid, host, port } = running;
  if (pid === undefined || host === undefined || port === undefined || running.stopping !== undefined)
    return undefined;
  if (running.recorded !== true) return undefined;
  return { pid, host, port };
}

/** A wildcard bind is shown as 127.0.0.1, which only this machine can use: say what senders elsewhere use. */
export function wildcardNote(loaded: LoadedConfig, address: Address): string {
  const bind = address.host ?? loaded.config.platforms.webhook.host;
  if (!bindsEveryInterface(bind)) return "";
  return `Note: the gateway listens on every interface (${bind}); the URL shows 127.0.0.1 — a sender on another machine uses this machine's address or name in its place\n`;
}

/** Port 0 in config.yaml: the gateway picks a free port when it starts, so no URL can be printed yet. */
export function portNote(loaded: LoadedConfig, name: string, address: Address): string {
  if ((address.port ?? loaded.config.platforms.webhook.port) !== 0) return "";
  return `Note: ${settingKey(loaded.config.platforms.webhook, "port")} is 0 (${loaded.paths.config}): the gateway picks a free port when it starts, so the URL's port is not known yet — svc gateway status shows it, and svc webhook subscribe ${name} prints the full URL once the gateway runs\n`;
}

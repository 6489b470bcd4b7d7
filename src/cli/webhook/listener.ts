import type { LoadedConfig } from "../../config/load.js";
import { webhookOffReason } from "../../config/webhookEnabled.js";
import { SvcError } from "../../errors.js";
import type { Address, Stopping } from "./address.js";

/**
 * `--port 0` of `svc webhook test` / `redeliver`: no gateway listens on port 0 (it is how `gateway run`
 * asks for a free port), and a request to it would go to port 80, HTTP's default — whatever listens there
 * would get the event, signed with the route's secret.
 */
export const PORT_ZERO = "--port 0: give the port the gateway listens on (svc gateway status shows it)";

/**
 * A running gateway that records no listener (webhook adapter off, MCP servers and cron jobs only): it has
 * no address to send to, and "start it" would be wrong — it runs. With `state.backend: redis` it is a
 * worker of the shared queue, meant to run without one: the gateways sharing that Redis serve the route.
 */
export function noListener(loaded: LoadedConfig, pid: number): SvcError {
  const what =
    loaded.config.state.backend === "redis"
      ? "it runs the shared queue's runs (state.backend: redis): send to a gateway sharing that Redis whose adapter is on, with --port <its port> when it runs on this host, or run this command on that gateway's host"
      : "enable it with svc gateway setup --enable, then restart the gateway: svc gateway stop, then svc gateway start";
  return new SvcError(
    "delivery_failed",
    `the running gateway (pid ${pid}) has no webhook listener: the webhook adapter is off (${webhookOffReason(loaded)}) — ${what}`,
  );
}

/**
 * Where to send instead on a host whose adapter is off with `state.backend: redis` (a worker's, or an admin
 * host's that names the Redis): the gateways sharing that Redis serve the route, and a gateway started here
 * would have no listener — so not "start it". Undefined elsewhere.
 */
export function sharedAdapterOff(loaded: LoadedConfig): string | undefined {
  if (loaded.config.state.backend !== "redis" || loaded.config.platforms.webhook.enabled) return undefined;
  return "the webhook adapter is off here, and the gateways sharing its Redis (state.backend: redis) whose adapter is on serve the route: send to one of them, with --port <its port> when it runs on this host, or run this command on its host";
}

/**
 * What to do when nothing answered at `port`: start the gateway — unless this SVC_HOME's gateway runs and
 * listens on another port (a `--port` given wrong), where "start it" would be wrong: it runs, elsewhere;
 * or it is stopping (its listener closed while runs drain), where "start it" would be wrong too: it runs
 * until its runs are done, then it can be started again.
 */
export function unreachableHint(
  loaded: LoadedConfig,
  running: Address & { readonly stopping?: Stopping },
  port: number | undefined,
  start: string,
): string {
  const { stopping } = running;
  if (stopping !== undefined && (port === undefined || port === running.port))
    return `the gateway of ${loaded.paths.home} (pid ${stopping.pid}) is stopping (since ${stopping.since}) and takes no new requests — once it has stopped, start it again (svc gateway start) and run this command again`;
  if (running.port === undefined || port === undefined || port === running.port) return start;
  return `the gateway of ${loaded.paths.home} runs and listens on port ${running.port}, not ${port} (svc gateway status): leave out --port to send there`;
}

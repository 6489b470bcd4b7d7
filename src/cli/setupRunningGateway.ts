import type { SvcPaths } from "../config/paths.js";
import { gatewayStateFile, readGatewayState } from "../io/gatewayState.js";

/**
 * What `svc gateway setup` says of the gateway already running (pid `pid`): the adapter and port are read at
 * its start only, but a SIGHUP re-reads `.env`, so when they stay as it runs them a new secret needs a reload,
 * not a stop that drains its runs. `currentPort` is the port setting before setup (`"0"`: a free port at each
 * start, which the gateway records as the one it picked). `elsewhere`: the PID namespace of a gateway this
 * command cannot signal (a container and its host sharing SVC_HOME), where what to run is run instead.
 */
export function runningGatewayLine(
  paths: SvcPaths,
  pid: number,
  answers: { readonly enabled: boolean; readonly port: number; readonly secret: string | undefined },
  currentPort: string,
  elsewhere?: string,
): string {
  const state = readGatewayState(gatewayStateFile(paths));
  // Stopping (its runs draining): it ignores a SIGHUP, and a stop is under way; its next start reads all.
  const stoppingSince = state?.pid === pid ? state.stopping_since : undefined;
  if (stoppingSince !== undefined && elsewhere === undefined)
    return `The gateway (pid ${pid}) is stopping (since ${stoppingSince}): the new settings apply at its next start — svc gateway start, once svc gateway status says not running`;
  // A recorded port 0 is a gateway without a listener (adapter off).
  const listening = state !== undefined && state.pid === pid && state.port > 0;
  const samePort =
    listening && (answers.port === state.port || (answers.port === 0 && currentPort.trim() === "0"));
  // A gateway of another PID namespace cannot be signalled from here: what to run is run where it runs.
  const there =
    elsewhere === undefined
      ? ""
      : `, where it was started: in its PID namespace ${elsewhere} (docker exec <container> …, or on the host)`;
  const which = elsewhere === undefined ? `pid ${pid}` : `pid ${pid} of another PID namespace`;
  if (answers.secret !== undefined && answers.enabled && samePort)
    return `The gateway is running (${which}) with this adapter and port already: the new secret applies once it reloads .env — kill -HUP ${pid} (no restart needed)${there}`;
  return `The gateway is running (${which}) with the old settings: restart it to apply them (svc gateway stop, then svc gateway start)${there}`;
}

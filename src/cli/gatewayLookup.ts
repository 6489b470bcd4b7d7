import { bindsEveryInterface } from "../config/host.js";
import type { SvcPaths } from "../config/paths.js";
import { SvcError } from "../errors.js";
import {
  GatewayElsewhereError,
  type GatewayState,
  gatewayStateFile,
  readGatewayClaim,
  readGatewayState,
  runningPid,
} from "../io/gatewayState.js";
import { localRequest } from "../io/localHttp.js";
import { listenAddress } from "./listenAddress.js";

/** The host a command connects to for a gateway bound to `host` (a wildcard bind: loopback). */
export const connectHost = (host: string) =>
  bindsEveryInterface(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

/**
 * How `/health` at `host:port` answers within a second: `ok`, a 200 of the gateway `instance` names (its
 * answer carries that id in `Svc-Instance`; any 200 when no id is given, as for a gateway.json an older svc
 * wrote); `other`, a 200 without it (another program, or another gateway, listens there: the gateway's port
 * taken once it was gone); `none`, no 200.
 */
export async function health(
  host: string,
  port: number,
  instance: string | undefined,
): Promise<"ok" | "other" | "none"> {
  try {
    const res = await localRequest(`http://${connectHost(host)}:${port}/health`, { timeoutMs: 1000 });
    if (res.status !== 200) return "none";
    return instance === undefined || res.instance === instance ? "ok" : "other";
  } catch {
    return "none";
  }
}

/** What answers at `address` where a gateway's /health does not, said so (`health`'s `other`). */
export function otherAnswers(address: string): string {
  return `another program (or another gateway) answers at ${address}`;
}

/** `gateway.json` as the started gateway wrote it once up (port 0: no listener), when it describes `pid`. */
export function recordedState(paths: SvcPaths, pid: number): GatewayState | undefined {
  const state = readGatewayState(gatewayStateFile(paths));
  return state?.pid === pid && typeof state.host === "string" && Number.isInteger(state.port)
    ? state
    : undefined;
}

/**
 * Whether the gateway `pid` is still starting: its `gateway.json` holds only its claim (its pid and PID
 * namespace, written as it claimed `gateway.pid`), not yet where it listens, which it records once it does.
 */
export function stillStarting(paths: SvcPaths, pid: number): boolean {
  const stateFile = gatewayStateFile(paths);
  return readGatewayState(stateFile) === undefined && readGatewayClaim(stateFile)?.pid === pid;
}

/** Why a gateway still starting (`stillStarting`) is not asked for its /health: `who` it is, as the line names it. */
export function notRecordedYet(stateFile: string, who: "the gateway" | "that gateway"): string {
  return `${who} has not recorded in ${stateFile} where it listens yet, as it does once it listens: it is still starting (waiting for the state directory's lock, or for Redis to load its data)`;
}

/**
 * What the `/health` of a gateway whose pid is of another PID namespace says (its file is kept): the pid
 * cannot be checked or signalled from here, so the address its `gateway.json` records is asked.
 */
export type ElsewhereHealth =
  | { readonly answers: true; readonly address: string }
  | {
      readonly answers: false;
      readonly address: string;
      readonly stoppingSince?: string;
      /** A 200 came, but not that gateway's (`health`'s `other`): something else listens there. */
      readonly other?: true;
    }
  | { readonly answers: undefined; readonly why: string };

export async function askElsewhere(paths: SvcPaths, err: GatewayElsewhereError): Promise<ElsewhereHealth> {
  const recorded = recordedState(paths, err.pid);
  const stateFile = gatewayStateFile(paths);
  // Its claim alone: the gateway records where it listens once it listens.
  if (recorded === undefined && stillStarting(paths, err.pid))
    return {
      answers: undefined,
      why: `${notRecordedYet(stateFile, "that gateway")}, or was killed before it listened`,
    };
  if (recorded === undefined)
    return { answers: undefined, why: `${stateFile} records no address for that pid` };
  if (recorded.port === 0)
    return { answers: undefined, why: "that gateway runs without an HTTP listener (webhook adapter off)" };
  const address = listenAddress(recorded.host, recorded.port);
  const answer = await health(recorded.host, recorded.port, recorded.instance);
  if (answer === "ok") return { answers: true, address };
  const other = answer === "other" ? { other: true as const } : {};
  return recorded.stopping_since === undefined
    ? { answers: false, address, ...other }
    : { answers: false, address, stoppingSince: recorded.stopping_since, ...other };
}

/**
 * The gateway of this SVC_HOME as a command that uses it finds it: `pid` as its gateway.pid names it.
 * `elsewhere` when that pid is of another PID namespace (a container and its host sharing SVC_HOME): this
 * command can reach it over HTTP but cannot signal it (`cannotSignal` says where to run what).
 */
export type RunningGateway =
  | { readonly pid: number; readonly elsewhere?: undefined }
  | {
      readonly pid: number;
      readonly elsewhere: GatewayElsewhereError;
      readonly found: Exclude<ElsewhereHealth, { answers: false; stoppingSince?: undefined }>;
    };

/**
 * A gateway.pid of another PID namespace whose /health gives no answer at the address its gateway.json
 * records (and that did not record that it began to stop): whether that gateway runs cannot be told.
 */
export interface SilentGateway {
  readonly silent: GatewayElsewhereError;
  readonly found: Extract<ElsewhereHealth, { answers: false }>;
}

/**
 * The gateway of this SVC_HOME as `runningGateway` finds it, and, when none is taken to run because a
 * gateway.pid of another PID namespace gives no answer, what was asked (`silent`), so a command can say it.
 */
export async function findGateway(paths: SvcPaths): Promise<RunningGateway | SilentGateway | undefined> {
  let pid: number | undefined;
  try {
    pid = runningPid(paths);
  } catch (err) {
    if (!(err instanceof GatewayElsewhereError)) throw err;
    const found = await askElsewhere(paths, err);
    if (found.answers === false && found.stoppingSince === undefined) return { silent: err, found };
    return { pid: err.pid, elsewhere: err, found };
  }
  return pid === undefined ? undefined : { pid };
}

/**
 * `runningPid` for the commands that use the running gateway (reload it, send to it, say it picks a change
 * up): a gateway.pid of another PID namespace is not refused but its /health asked, as `svc gateway status`
 * does. It runs when it answers, when it began to stop (it drains its runs), and when it records no
 * listener to ask (webhook adapter off: its file is kept, so it is taken to run); when nothing answers at
 * the address its gateway.json records, none runs (`undefined`), as for a stale pid here.
 */
export async function runningGateway(paths: SvcPaths): Promise<RunningGateway | undefined> {
  const gateway = await findGateway(paths);
  return gateway === undefined || "silent" in gateway ? undefined : gateway;
}

/** The `Health:` line's text of a gateway of another namespace that did not answer (or was not asked). */
export function elsewhereSilence(
  paths: SvcPaths,
  found: Exclude<ElsewhereHealth, { answers: true }>,
): string {
  if (found.answers === undefined) return `not asked — ${found.why}`;
  const since = found.stoppingSince === undefined ? "" : `; it began to stop at ${found.stoppingSince}`;
  const stateFile = gatewayStateFile(paths);
  if (found.other === true)
    return `${otherAnswers(found.address)}, not the gateway ${stateFile} names (its answer lacks the instance id recorded there): that gateway no longer listens there, or this command does not reach its address${since}`;
  return `no answer at ${found.address}, where ${stateFile} says it listens (this command may not reach that address, or the gateway has stopped${since})`;
}

/** Where a gateway of another PID namespace runs, as the command that cannot signal it says it. */
export function runsElsewhere(paths: SvcPaths, err: GatewayElsewhereError, found: ElsewhereHealth): string {
  const at = found.answers === undefined ? "" : ` at ${found.address}`;
  return `the gateway is running${at} in another PID namespace (${err.namespace}; this command runs in ${err.here}), as pid ${err.pid} there (${paths.pidFile}), which this command cannot signal`;
}

/**
 * The refusal of a command that must signal a gateway of another PID namespace (exit 2): run `command`
 * where the gateway was started, or send it `signal` there.
 */
export function cannotSignal(
  paths: SvcPaths,
  gateway: Extract<RunningGateway, { elsewhere: GatewayElsewhereError }>,
  command: string,
  signal: string,
): SvcError {
  return new SvcError(
    "usage",
    `${runsElsewhere(paths, gateway.elsewhere, gateway.found)} — run ${command} where it was started (docker exec <container> ${command}, or on the host), or kill -${signal} ${gateway.pid} in that namespace`,
  );
}

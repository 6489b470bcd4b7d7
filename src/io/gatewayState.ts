import { existsSync, readFileSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { type SvcPaths, svcHome } from "../config/paths.js";
import { SvcError } from "../errors.js";
import { pidNamespace } from "./pidNamespace.js";
import { processAlive } from "./processAlive.js";
import { writeJsonAtomic } from "./stores/atomicFile.js";
import { forgetSighting, readLock, removeStaleLock, touchedAgo, untouchedFor } from "./stores/fileLock.js";

/** What `svc gateway start` learned about the gateway it started (`$SVC_HOME/gateway.json`). */
export interface GatewayState {
  readonly pid: number;
  readonly host: string;
  readonly port: number;
  readonly started_at: string;
  /** The PID namespace `pid` is a pid of (Linux: `pid:[4026531836]`); only a command in it can judge the pid. */
  readonly pid_namespace?: string;
  /** When it began to stop (its listener closed, runs draining): `status` says so instead of "not answering". */
  readonly stopping_since?: string;
  /**
   * `state.backend` as it started (a change takes a restart): where its unfinished runs go at its stop.
   * Absent in a file written by an older svc. Never the Redis URL.
   */
  readonly state_backend?: "local" | "redis";
  /**
   * The `gateway.drain_timeout_seconds` it runs with (the start's, then each applied reload's), from which
   * `svc gateway stop` sets its default wait: a `config.yaml` edited (or broken) since is not what it runs.
   * Absent in a file written by an older svc.
   */
  readonly drain_timeout_seconds?: number;
  /**
   * `platforms.webhook.delivery_history` as it started (a change takes a restart): whether it records the
   * requests `svc webhook deliveries` lists, whatever `config.yaml` says since. Absent in an older svc's file.
   */
  readonly delivery_history?: boolean;
  /**
   * The id the gateway made at its start, which each of its `/health` 200s names in its `Svc-Instance`
   * header: an answer at `host:port` without it is another listener's, not this gateway's. Absent in a file
   * written by an older svc (any 200 is then taken for its gateway's, as that svc took it); one edited by hand
   * into no id (null, a number, "", spaces alone) is read as absent (`readGatewayState`).
   */
  readonly instance?: string;
}

export function gatewayStateFile(paths: SvcPaths): string {
  return join(paths.home, "gateway.json");
}

/**
 * Whose pid `gateway.pid` holds, as `gateway.json` records it: the pid and its PID namespace. A gateway
 * writes them alone (its claim) as it claims `gateway.pid`, before it waits for anything (the state
 * directory's lock, a Redis still loading its data), and the whole record (`GatewayState`) once it listens.
 */
export interface GatewayClaim {
  readonly pid: number;
  readonly pid_namespace?: string;
}

/** The pid and PID namespace `gateway.json` records (its claim or its whole record), if it can be read. */
export function readGatewayClaim(stateFile: string): GatewayClaim | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(stateFile, "utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { pid, pid_namespace: namespace } = parsed as Record<string, unknown>;
  if (typeof pid !== "number") return undefined;
  return typeof namespace === "string" ? { pid, pid_namespace: namespace } : { pid };
}

/**
 * Whether `gateway.json` records this process: its pid in its PID namespace (its claim or its whole record).
 * Pids of two PID namespaces often collide (two containers' gateways are both pid 1), so the pid alone does
 * not tell this gateway's record from one that took this home over meanwhile (`removeLeftElsewhere`).
 */
export function recordsThisProcess(stateFile: string): boolean {
  const recorded = readGatewayClaim(stateFile);
  return recorded?.pid === process.pid && recorded.pid_namespace === pidNamespace();
}

/**
 * Whether `gateway.pid` names this process: its pid, which `gateway.json` does not record for another PID
 * namespace. A gateway that took this home over while this one was paused or hung (judging it killed) wrote
 * its own gateway.pid, whose pid may be this one's number in its namespace, and records its namespace.
 */
export function pidFileNamesThisProcess(paths: SvcPaths): boolean {
  const text = readLock(paths.pidFile);
  if (text === undefined || Number(text.trim()) !== process.pid) return false;
  const recorded = readGatewayClaim(gatewayStateFile(paths));
  return recorded?.pid !== process.pid || recorded.pid_namespace === pidNamespace();
}

/**
 * Records this process's pid and PID namespace in `gateway.json` as it claims `gateway.pid`, which holds the
 * pid alone: a command of another PID namespace (a container and its host sharing SVC_HOME) then knows from
 * the start on that the pid is not one of its own, rather than judging it (another process there, or none)
 * stale and removing the file while the gateway waits to start. Not over the record of a live gateway of
 * this home that `gateway.pid` no longer names (which a refused start names), nor where the namespace is
 * unknown (no /proc). Best effort: one that cannot be written leaves the pid judged as before, and the
 * gateway says so when it writes its whole record once it listens.
 */
export function recordClaim(paths: SvcPaths): void {
  const namespace = pidNamespace();
  if (namespace === undefined) return;
  const stateFile = gatewayStateFile(paths);
  const recorded = readGatewayClaim(stateFile);
  // Kept (`recordBeforeClaim`): a gateway of this home in another PID namespace, which this process cannot
  // see, may still serve what this record names, and a start refused for its port names it, and puts it back.
  let before: unknown;
  try {
    before = JSON.parse(readFileSync(stateFile, "utf8"));
  } catch {
    before = undefined;
  }
  if (
    recorded !== undefined &&
    recorded.pid !== process.pid &&
    Number.isInteger(recorded.pid) &&
    recorded.pid > 0 &&
    (recorded.pid_namespace === undefined || recorded.pid_namespace === namespace) &&
    processAlive(recorded.pid) &&
    isGateway(recorded.pid) &&
    servesHome(recorded.pid, paths.home)
  )
    return;
  try {
    writeJsonAtomic(stateFile, { pid: process.pid, pid_namespace: namespace } satisfies GatewayClaim);
    // Only another PID namespace's record, decided by the namespace alone: its pid may be this process's
    // number there (two containers' gateways are both pid 1). One of this namespace whose pid is not a live
    // gateway of this home (checked above) is stale, a gateway killed without removing it, and a failed start
    // removes it.
    replacedByClaim =
      isRecord(before) && typeof before.pid_namespace === "string" && before.pid_namespace !== namespace
        ? { stateFile, record: before }
        : undefined;
  } catch {
    // Said once the gateway listens, where its whole record fails to be written the same way.
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The record of `gateway.json` this process's claim was written over (`recordClaim`), as it was read. */
let replacedByClaim: { readonly stateFile: string; readonly record: Record<string, unknown> } | undefined;

/**
 * What `gateway.json` said before this process wrote its claim there (`recordClaim`), while that claim is
 * still what it says: a gateway of this home in another PID namespace (whose pid this process cannot see, so
 * its record was not kept) may serve at the address it records, and a start refused for that port names it
 * by that record (`portHolder`). Undefined once this process wrote its whole record, or another took the file.
 */
export function recordBeforeClaim(stateFile: string): GatewayState | undefined {
  if (replacedByClaim?.stateFile !== stateFile || !recordsThisProcess(stateFile)) return undefined;
  return recordedState(replacedByClaim.record);
}

/**
 * Forgets the record this process's claim was written over (`recordBeforeClaim`), once this process has
 * written its whole record there: from then on a refused port is not that gateway's, and no exit puts it back.
 */
export function forgetRecordBeforeClaim(): void {
  replacedByClaim = undefined;
}

/**
 * Puts back the record this process's claim was written over (`recordBeforeClaim`), for a start that ends
 * before its gateway listens: a failed start never removes the record of another gateway, which may still
 * serve. False when there is none to put back (the claim is then removed by the caller) or it could not be
 * written.
 */
export function restoreRecordBeforeClaim(stateFile: string): boolean {
  const replaced = replacedByClaim;
  if (replaced?.stateFile !== stateFile || !recordsThisProcess(stateFile)) return false;
  try {
    writeJsonAtomic(stateFile, replaced.record);
  } catch {
    return false;
  }
  replacedByClaim = undefined;
  return true;
}

/**
 * After a crash or a container restart the pid of a stale `gateway.pid` may belong to another process
 * (or to this one): where /proc shows command lines, only a process with a `gateway` argument counts.
 */
function isGateway(pid: number): boolean {
  if (pid === process.pid) return false;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return true; // no /proc (macOS) or not readable: trust the pid
  }
  return cmdline.split("\0").includes("gateway");
}

/**
 * The address options (`--host`, `--port`) the gateway process `pid` was started with, as /proc shows its
 * command line: where it listens then is not the configuration's. Empty without /proc.
 */
export function addressOptionsOf(pid: number): string[] {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
  return ["--host", "--port"].filter((flag) =>
    args.some((arg) => arg === flag || arg.startsWith(`${flag}=`)),
  );
}

/** A directory's canonical path when it exists (a symlinked home is the same home), else as given. */
function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Whether the gateway `pid` serves `home`: the home its environment names, read as `svcHome` reads it
 * (against its `HOME` and working directory). A `gateway.pid` copied from another home, or a pid reused by
 * the gateway of another home, must not make `stop` signal it.
 */
function servesHome(pid: number, home: string): boolean {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return true; // no /proc (macOS) or not readable: trust the pid
  }
  const env: NodeJS.ProcessEnv = {};
  for (const entry of environ.split("\0")) {
    const at = entry.indexOf("=");
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  let cwd = "/";
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    // Its working directory is unknown: a relative SVC_HOME is read against the root.
  }
  try {
    return (
      canonical(svcHome(env, env.HOME === undefined ? { cwd } : { home: env.HOME, cwd })) === canonical(home)
    );
  } catch {
    // Its SVC_HOME is not valid UTF-8 (an older svc started so): not this home, which is.
    return false;
  }
}

/**
 * A gateway.pid written in another PID namespace than this command's: whether its gateway runs cannot be
 * told from here, so the file is kept and the command says where to ask.
 */
export class GatewayElsewhereError extends SvcError {
  constructor(
    paths: SvcPaths,
    readonly pid: number,
    readonly namespace: string,
    readonly here: string,
  ) {
    super(
      "usage",
      `${paths.pidFile} names pid ${pid} of another PID namespace (${namespace}; this command runs in ${here}: a container and its host, or two containers, share this SVC_HOME) — whether that gateway runs cannot be told from here: run svc gateway status|stop where it was started (docker exec <container> svc gateway …, or on the host); if no gateway runs there any more, remove ${paths.pidFile}`,
    );
  }
}

/**
 * How long ago `gateway.pid` was last touched by this process's clock (ms; negative when dated ahead of it:
 * said, not judged by), and how long this process has seen it untouched (`untouchedFor`: ms of its
 * monotonic clock, 0 at its first sight and whenever its text or time changed). The gateway that wrote it
 * touches it every HEARTBEAT_MS while it runs, so a gateway of another PID namespace, whose pid cannot be
 * checked here, is judged by it. Undefined when the file is gone.
 */
export function pidFileTouched(
  paths: SvcPaths,
): { readonly ms: number; readonly mtimeMs: number; readonly untouchedMs: number } | undefined {
  // Its text read first: one written anew in between is judged by its own, fresh, time.
  const text = readLock(paths.pidFile);
  const touched = touchedAgo(paths.pidFile);
  if (text === undefined || touched === undefined) return undefined;
  return { ...touched, untouchedMs: untouchedFor(paths.pidFile, text, touched.mtimeMs) };
}

/**
 * Removes the `gateway.pid` and `gateway.json` a gateway of another PID namespace left (killed there: its
 * container stopped or restarted), while they still name it: not the files of a gateway started since.
 */
export function removeLeftElsewhere(paths: SvcPaths, err: GatewayElsewhereError): void {
  const stateFile = gatewayStateFile(paths);
  const recorded = readGatewayClaim(stateFile);
  if (recorded?.pid !== err.pid || recorded.pid_namespace !== err.namespace) return;
  forgetSighting(paths.pidFile);
  const text = readLock(paths.pidFile);
  try {
    if (text !== undefined && Number(text.trim()) === err.pid) removeStaleLock(paths.pidFile, text);
  } catch {
    // Not removable (SVC_HOME read-only): the start's claim of gateway.pid says so.
  }
  if (readGatewayClaim(stateFile)?.pid_namespace === err.namespace) removeStale(stateFile);
}

/**
 * The pid in `gateway.pid` when that process is a live gateway of this home; a stale file is removed, and
 * with it the `gateway.json` of that pid (a gateway killed with SIGKILL removes neither).
 */
export function runningPid(paths: SvcPaths): number | undefined {
  if (!existsSync(paths.pidFile)) return undefined;
  let text: string;
  try {
    text = readFileSync(paths.pidFile, "utf8");
  } catch (err) {
    throw new SvcError(
      "store_corrupt",
      `${paths.pidFile}: cannot be read (${(err as Error).message}) — remove it if no gateway is running`,
    );
  }
  const pid = Number(text.trim());
  const stateFile = gatewayStateFile(paths);
  // Its claim (written as the gateway claimed gateway.pid) or its whole record: the namespace from the start on.
  const recorded = readGatewayClaim(stateFile);
  const namespace = recorded?.pid === pid ? recorded.pid_namespace : undefined;
  const here = pidNamespace();
  // A pid of another PID namespace (a gateway on the host, this command in a container of the same
  // SVC_HOME, or the other way round) means another process here, or none: not judged, and kept.
  if (Number.isInteger(pid) && namespace !== undefined && here !== undefined && namespace !== here)
    throw new GatewayElsewhereError(paths, pid, namespace, here);
  if (Number.isInteger(pid) && pid > 0 && processAlive(pid) && isGateway(pid) && servesHome(pid, paths.home))
    return pid;
  removeStale(paths.pidFile);
  if (Number.isInteger(pid) && recorded?.pid === pid) removeStale(stateFile);
  return undefined;
}

/**
 * A stale file stays stale where it cannot be removed (an SVC_HOME on a read-only file system): no gateway
 * runs either way, and the start that can write there again removes it.
 */
function removeStale(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // Left for a later status, start or stop.
  }
}

/**
 * The gateway of `home` that its `gateway.json` says listens on `port`, when that process is a live gateway
 * of `home` (not this process); `named`: whether its `gateway.pid` names it (what `svc gateway stop` finds).
 */
export function recordedGatewayOn(
  paths: SvcPaths,
  port: number,
): { readonly pid: number; readonly named: boolean } | undefined {
  const state = readGatewayState(gatewayStateFile(paths));
  const pid = state?.port === port ? state.pid : undefined;
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (!processAlive(pid) || !isGateway(pid) || !servesHome(pid, paths.home)) return undefined;
  let named: boolean;
  try {
    named = Number(readFileSync(paths.pidFile, "utf8").trim()) === pid;
  } catch {
    named = false;
  }
  return { pid, named };
}

/**
 * What `gateway.json` says once its gateway listens, if it can be read; not a claim alone (`GatewayClaim`: a
 * gateway still starting), which records no address yet.
 */
export function readGatewayState(stateFile: string): GatewayState | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(stateFile, "utf8"));
  } catch {
    return undefined;
  }
  return recordedState(parsed);
}

/** A parsed `gateway.json` as `readGatewayState` reads it. */
function recordedState(parsed: unknown): GatewayState | undefined {
  const state = parsed as GatewayState | null;
  if (typeof state?.host !== "string" || typeof state.port !== "number") return undefined;
  const instance: unknown = state.instance;
  if (instance === undefined) return state;
  // An id with spaces around it (edited by hand) is read as the id: a header's value is read without them,
  // so the gateway's answer names the id alone.
  if (typeof instance === "string" && instance.trim() !== "")
    return instance === instance.trim() ? state : { ...state, instance: instance.trim() };
  // An `instance` edited by hand into no id (null, a number, "", spaces: a header's value is read without the
  // spaces around it, so no answer names it), which no gateway sends: the file is read as
  // one that records none (an older svc's), so its gateway's answer is still its own, not another listener's.
  const { instance: _unread, ...recorded } = state;
  return recorded;
}

/**
 * Whether `gateway.json` records the gateway `pid` of this process's PID namespace (or of none it names, as a
 * gateway of an older svc, or one without /proc, wrote it). Pids of two namespaces often collide (two
 * containers' gateways are both pid 1): a record of `pid` in another namespace is another gateway's, one
 * that took this home over (`recordsThisProcess` asks the same of the gateway itself).
 */
export function recordsPidHere(stateFile: string, pid: number): boolean {
  const recorded = readGatewayClaim(stateFile);
  return (
    recorded?.pid === pid &&
    (recorded.pid_namespace === undefined || recorded.pid_namespace === pidNamespace())
  );
}

/** Host and port of the running gateway: from `gateway.json` when it describes this pid, else the configuration. */
export function gatewayAddress(paths: SvcPaths, pid?: number): { host: string; port: number } {
  const state = readGatewayState(gatewayStateFile(paths));
  // No state file, or only a starting gateway's claim: fall back to the configuration.
  if (state !== undefined && (pid === undefined || state.pid === pid))
    return { host: state.host, port: state.port };
  const webhook = loadConfig().config.platforms.webhook;
  return { host: webhook.host, port: webhook.port };
}

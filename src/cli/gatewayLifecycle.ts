import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { loadConfig } from "../config/load.js";
import { type SvcPaths, svcHome, svcPaths } from "../config/paths.js";
import { describeError, SvcError } from "../errors.js";
import { openGatewayOutput } from "../io/gatewayOutput.js";
import {
  addressOptionsOf,
  GatewayElsewhereError,
  gatewayAddress,
  gatewayStateFile,
  pidFileTouched,
  readGatewayState,
  recordedGatewayOn,
  recordsPidHere,
  removeLeftElsewhere,
  runningPid,
} from "../io/gatewayState.js";
import { assertHomeWritable } from "../io/homeWritable.js";
import { findListener } from "../io/http/listenHint.js";
import { narrowOpenFile } from "../io/privateMode.js";
import { continueProcess, processRunning, processStat } from "../io/processAlive.js";
import { type ForeignLockSeen, watchForeignLock } from "../io/state/journal/dirLock.js";
import { LOADED_HINT, LOADING_HINT } from "../io/state/redis/loadingWait.js";
import { noRoomProblem } from "../io/stores/atomicFile.js";
import { FOREIGN_UNTOUCHED_MS, HEARTBEAT_MS } from "../io/stores/fileLock.js";
import { stateDir } from "../state/gatewayState.js";
import { gatewayV8Flags } from "./gatewayHeap.js";
import {
  askElsewhere,
  elsewhereSilence,
  health,
  notRecordedYet,
  otherAnswers,
  recordedState,
  runsElsewhere,
  stillStarting,
} from "./gatewayLookup.js";
import { unknownGatewayCommand } from "./gatewayUnknown.js";
import { assertHomeInSight } from "./homeInSight.js";
import { type Interrupt, listenForInterrupt, raiseAgain } from "./interrupt.js";
import { listenAddress } from "./listenAddress.js";
import { parseHostOption, parsePortOption, parseSecondsOption } from "./options.js";
import { SECRET_FILE_HELP } from "./secretOption.js";
import { runSetup, type SetupOptions } from "./setupWizard.js";

export { listenAddress };

/**
 * What becomes of a run still going when a stop's drain (`gateway.drain_timeout_seconds`) ends, by the
 * state backend of config.yaml: with Redis it goes back there for any instance to run; else it is kept
 * for this SVC_HOME's next start.
 */
export function leftAtDrainEnd(backend: string | undefined): string {
  return backend === "redis" ? "go back to Redis for any instance to run" : "are kept for the next start";
}

/** The log line of a second stop signal (Ctrl-C again) while the runs drain: the drain is not cut short. */
export function stopSignalAgain(signal: string, backend: string | undefined): string {
  const left =
    backend === "redis"
      ? "what has not finished goes back to Redis for any instance to run"
      : "what has not finished is kept for the next start";
  return `[gateway] ${signal} received again: already stopping — runs still in flight get the rest of gateway.drain_timeout_seconds, then ${left}`;
}

/**
 * The log line of a second stop signal once the drain is over, while the exit waits (`finishing`: `waiting
 * for <a token refresh> to be saved (at most 30 s)`): cut there, the tokens file would keep a refresh token
 * the authorization server has replaced. The wait is not cut short either.
 */
export function stopSignalWhileFinishing(signal: string, finishing: string): string {
  return `[gateway] ${signal} received again: already stopping — the drain is over; ${finishing}, then the gateway exits`;
}

/**
 * The refusal of a start (`start`, `run`) while this SVC_HOME's gateway `pid` is stopping (SIGTERM, `svc
 * gateway stop`: it runs until its runs drain), where "stop it" would be advice for what is under way.
 */
export function stoppingGateway(pid: number, paths: SvcPaths): SvcError | undefined {
  const stopping = recordedState(paths, pid)?.stopping_since;
  return stopping === undefined
    ? undefined
    : new SvcError(
        "usage",
        `the gateway is stopping (pid ${pid}, since ${stopping}): its runs in flight finish first, or ${afterDrain(runningBackend(paths, pid))} — once it has stopped (svc gateway status says not running), start it again`,
      );
}

function alreadyRunning(pid: number, paths: SvcPaths): SvcError {
  const stopping = stoppingGateway(pid, paths);
  if (stopping !== undefined) return stopping;
  return new SvcError(
    "usage",
    `the gateway is already running (pid ${pid}, ${paths.pidFile}) — stop it with svc gateway stop`,
  );
}

/** SVC_HOME for a message, or nothing when it cannot be told (no home directory): the commands that use it say why. */
function homeIfKnown(): string | undefined {
  try {
    return svcHome();
  } catch {
    return undefined;
  }
}

/**
 * `svc gateway logs -f`, `svc gateway stauts --json`: `start`, the group's default command, would refuse the
 * option before its action sees the word, with start's usage. The word is the mistake, and is named first.
 */
function refuseUnknownCommandBeforeOptions(gateway: Command): void {
  gateway.hook("preSubcommand", (group, subcommand) => {
    const [word] = group.args;
    if (subcommand.name() !== "start" || word === undefined || word === "start" || word.startsWith("-"))
      return;
    throw new SvcError("usage", unknownGatewayCommand(word, homeIfKnown()));
  });
}

/**
 * What `svc gateway start` saw of the state directory's lock of another PID namespace (`ForeignLockSeen`, as
 * JSON), handed to the gateway it spawns, whose wait for that lock counts the time start watched it.
 */
export const LOCK_WATCHED_ENV = "SVC_STATE_LOCK_WATCHED";

/** How long `svc gateway start` waits for /health unless --timeout says otherwise. */
const START_WAIT_SECONDS = "15";

async function start(
  options: { host?: string; port?: string; timeout?: string },
  command: Command,
): Promise<void> {
  // `start` is the default subcommand, so `svc gateway frob` arrives here as an argument.
  const [unknown] = command.args;
  if (unknown !== undefined) {
    // `svc gateway start foo` named start itself: refused as the other gateway commands refuse an operand.
    if (command.parent?.args[0] === "start")
      command.error(
        `error: too many arguments for 'start'. Expected 0 arguments but got ${command.args.length}.`,
        { exitCode: 2, code: "commander.excessArguments" },
      );
    throw new SvcError("usage", unknownGatewayCommand(unknown, homeIfKnown()));
  }
  const timeoutSeconds = parseSecondsOption(options.timeout ?? START_WAIT_SECONDS);
  if (options.port !== undefined) parsePortOption(options.port);
  if (options.host !== undefined) parseHostOption(options.host);
  const paths = svcPaths(svcHome());
  const existing = await runningHere(paths, elsewhereStart);
  if (existing !== undefined) throw alreadyRunning(existing, paths);
  assertHomeWritable(paths.home);
  // A state directory lock of another PID namespace (a container restarted after its gateway was killed) is
  // waited for by the gateway until it stayed untouched for FOREIGN_UNTOUCHED_MS: seen here, whatever the
  // gateway logs, the wait left is added to the deadline, and what this command watched is handed on. A
  // gateway on Redis takes no such lock, so waits for none (a lock left from the local backend included).
  const lockSeen =
    configuredStop(paths).backend === "redis" ? undefined : watchForeignLock(stateDir(paths.home));
  // Heard from before the gateway is spawned: a Ctrl-C caught while the command waits for it stops it.
  const interrupt = listenForInterrupt("the gateway's start");
  try {
    await startAndWait(paths, options, timeoutSeconds, interrupt, lockSeen);
  } finally {
    interrupt.dispose();
  }
}

/** Spawns the gateway in the background and waits for its /health; a start given up leaves nothing running. */
async function startAndWait(
  paths: SvcPaths,
  options: { host?: string; port?: string; timeout?: string },
  timeoutSeconds: number,
  interrupt: Interrupt,
  lockSeen: ForeignLockSeen | undefined,
): Promise<void> {
  const outFile = join(paths.logs, "gateway.out");
  const offset = existsSync(outFile) ? statSync(outFile).size : 0;
  const out = openGatewayOutput(paths.logs, outFile);
  // It holds the same lines as gateway.log (0600): one that already existed wider is narrowed too.
  try {
    narrowOpenFile(out, 0o600);
  } catch {
    // not ours to change (another owner)
  }
  const args = [
    ...process.execArgv,
    ...gatewayV8Flags(process.execArgv, process.env.NODE_OPTIONS, availableParallelism()),
    process.argv[1] as string,
    "gateway",
    "run",
  ];
  if (options.host !== undefined) args.push("--host", options.host);
  if (options.port !== undefined) args.push("--port", options.port);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ["ignore", out, out],
    env:
      lockSeen === undefined ? process.env : { ...process.env, [LOCK_WATCHED_ENV]: JSON.stringify(lockSeen) },
  });
  closeSync(out);
  let exited: number | null | undefined;
  child.on("exit", (code) => {
    exited = code;
  });
  child.unref();
  // Waits are timed on the clock that is never set: a step of the system clock (NTP) neither ends one
  // at once nor stretches it by the step.
  /** The gateway's wait for the state directory's lock of another PID namespace, which extends the deadline. */
  const lockWait =
    lockSeen === undefined
      ? undefined
      : {
          file: lockSeen.file,
          seconds: Math.ceil(Math.max(0, FOREIGN_UNTOUCHED_MS - lockSeen.untouchedMs) / 1000),
        };
  const deadline = performance.now() + (timeoutSeconds + (lockWait?.seconds ?? 0)) * 1000;
  // offset counts bytes: slice the bytes, then decode (a string index would drift on multibyte text).
  const output = () => readFrom(outFile, offset).toString("utf8");
  for (;;) {
    if (performance.now() >= deadline) break;
    if (interrupt.signal.aborted)
      return stopInterrupted(child.pid as number, () => exited !== undefined, interrupt);
    if (exited !== undefined) {
      // Refused because another start of this home won the race (two `svc gateway start` at once, whose
      // gateway claims gateway.pid as it starts): said as a start that finds it running says it.
      const other = runningPid(paths);
      if (other !== undefined && other !== child.pid) throw alreadyRunning(other, paths);
      const said = output().trim();
      const lost = said === "" ? outputLost(paths.logs) : undefined;
      if (lost !== undefined)
        throw new SvcError(
          "startup_refused",
          `the gateway exited (code ${exited}) before it answered /health, and its output could not be kept in ${outFile}: ${lost}; svc gateway run shows that output in the terminal`,
        );
      throw new SvcError(
        "startup_refused",
        `the gateway exited (code ${exited}) before it answered /health:\n${said}\n(full output: ${outFile})`,
      );
    }
    // What the gateway records once it is up, whatever the log level.
    const recorded = recordedState(paths, child.pid as number);
    if (recorded?.port === 0) {
      // Nothing answers /health: being up and past startup is all there is to wait for.
      process.stdout.write(
        `Gateway started: pid ${child.pid} — webhook adapter off, ${withoutListener(runningBackend(paths, child.pid as number))} (no HTTP listener)\nLogs: ${paths.gatewayLog} (output: ${outFile})\n`,
      );
      return;
    }
    if (recorded !== undefined && (await health(recorded.host, recorded.port, recorded.instance)) === "ok") {
      process.stdout.write(
        `Gateway started: pid ${recorded.pid}, listening on ${listenAddress(recorded.host, recorded.port)}\nLogs: ${paths.gatewayLog} (output: ${outFile})\n`,
      );
      return;
    }
    await Promise.race([sleep(100), interrupt.interrupted.catch(() => undefined)]);
  }
  // A failed start leaves nothing behind: a gateway that came up after the deadline would run unnoticed.
  const stopped = await stopStarted(child.pid as number, () => exited !== undefined);
  const within = `the gateway (pid ${child.pid}) did not answer /health within ${options.timeout ?? START_WAIT_SECONDS}s`;
  const fate = stopped ? "stopped" : "sent SIGTERM (it has not exited yet; svc gateway stop waits for it)";
  if (lockWait !== undefined && lockWait.seconds > 0)
    throw new SvcError(
      "startup_refused",
      `${within} and the ${lockWait.seconds} s more it was given while it waited for ${lockWait.file}, which names a gateway of another PID namespace, to stay untouched (a killed gateway's is taken over once it has), so it was ${fate} — see ${outFile}; a gateway there that still runs touches it, and the start is refused; if it only needs longer to start, give it more time: svc gateway start --timeout <seconds>`,
    );
  // What it said last of a Redis still loading its data (state.backend: redis), which it was waiting for.
  const loading = lastLoadingLine(output());
  if (loading !== undefined)
    throw new SvcError(
      "startup_refused",
      `${within}: it was waiting for Redis to load its data (${loading}), so it was ${fate} — start it again once Redis has loaded (its own log says when), or give it the time the load takes: svc gateway start --timeout <seconds>`,
    );
  throw new SvcError(
    "startup_refused",
    `${within}, so it was ${fate} — see ${outFile}; if it only needs longer to start (many MCP servers, a slow disk), give it more time: svc gateway start --timeout <seconds>`,
  );
}

/** The bytes of `file` from `offset` on (read at each look: not the whole of a gateway.out kept across many starts). */
function readFrom(file: string, offset: number): Buffer {
  const fd = openSync(file, "r");
  try {
    const bytes = Buffer.alloc(Math.max(0, fstatSync(fd).size - offset));
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * The gateway's last line (from its output) saying it waits for a Redis loading its data, from that wording
 * on; undefined when none, or when a later line says Redis has loaded (the start then waited for another thing).
 */
function lastLoadingLine(output: string): string | undefined {
  const lines = output
    .split("\n")
    .filter((line) => line.includes(LOADING_HINT) || line.includes(LOADED_HINT));
  const last = lines.at(-1);
  return last === undefined || !last.includes(LOADING_HINT)
    ? undefined
    : last.slice(last.indexOf(LOADING_HINT)).trim();
}

/**
 * Why a gateway that exited without a word could not have written one to `gateway.out` (a full disk: its
 * refusal went nowhere), found by writing a byte to a file of its own in `dir`; undefined when it can.
 */
function outputLost(dir: string): string | undefined {
  const probe = join(dir, `.gateway-out-probe-${process.pid}`);
  try {
    writeFileSync(probe, "\n");
    return undefined;
  } catch (err) {
    return noRoomProblem(err) ?? describeError(err);
  } finally {
    rmSync(probe, { force: true });
  }
}

/**
 * A Ctrl-C (SIGTERM, SIGHUP) while `svc gateway start` waited: the gateway it started in the background is
 * stopped, as a start that ran out of time stops it, and the command ends by the signal. Before, the
 * gateway came up on its own after the command had gone, unnoticed.
 */
async function stopInterrupted(pid: number, hasExited: () => boolean, interrupt: Interrupt): Promise<void> {
  const stopped = await stopStarted(pid, hasExited);
  const signal = interrupt.dispose() ?? "SIGINT";
  process.stderr.write(
    `svc: interrupted (${signal}) before the gateway answered /health: it (pid ${pid}) was ${stopped ? "stopped" : "sent SIGTERM (it has not exited yet; svc gateway stop waits for it)"}\n`,
  );
  raiseAgain(signal);
}

/** SIGTERM to a gateway that missed its start deadline; true once it exited (10 s at most). */
async function stopStarted(pid: number, hasExited: () => boolean): Promise<boolean> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return true; // already gone
  }
  for (const deadline = performance.now() + 10_000; performance.now() < deadline; await sleep(100)) {
    if (hasExited()) return true;
  }
  return false;
}

/**
 * How long `svc gateway stop` waits by default: the gateway's stop may take its drain timeout twice
 * (agent runs, then cron runs) plus MCP servers' shutdown, so a long `drain_timeout_seconds` must not
 * make stop give up (and suggest kill -9) while the gateway is still draining as configured.
 */
export function defaultStopWaitSeconds(drainTimeoutSeconds: number): number {
  return Math.max(60, 2 * drainTimeoutSeconds + 30);
}

/**
 * What `svc gateway stop` says it does: with Redis, pending coalescing groups stay there and fire on time,
 * and a run still going when the drain ends goes back there (`leftAtDrainEnd`).
 */
export function stopNotice(
  pid: number,
  backend: string | undefined,
  configured?: string,
  /** When a stop already under way began (gateway.json's `stopping_since`): said so, not as a stop that begins now. */
  stoppingSince?: string,
): string {
  const runs = `runs in flight finish, or ${leftAtDrainEnd(backend)} if still going after gateway.drain_timeout_seconds${backendChange({ configured })}`;
  const head =
    stoppingSince === undefined
      ? `Stopping the gateway (pid ${pid}): `
      : `The gateway (pid ${pid}) is already stopping (since ${stoppingSince}); waiting for it to exit: `;
  return backend === "redis"
    ? `${head}${runs}; pending coalescing groups stay in Redis and fire when their window closes…\n`
    : `${head}pending coalesced events are dispatched and ${runs}…\n`;
}

/** What a gateway without a listener runs: with Redis, also the runs other instances accepted. */
function withoutListener(backend: RunningBackend): string {
  return backend.backend === "redis"
    ? `the shared queue's runs (state.backend: redis), MCP servers and cron jobs only${backendChange(backend)}`
    : `MCP servers and cron jobs only${backendChange(backend)}`;
}

/** The state backend the running gateway uses, and config.yaml's when it now names another. */
export interface RunningBackend {
  /** The running gateway's (config.yaml's for one whose gateway.json records none: an older svc's). */
  readonly backend?: string;
  /** config.yaml's, when it names another than the running gateway's: a restart would use it. */
  readonly configured?: string | undefined;
}

/**
 * The state backend of the running gateway `pid`, as its gateway.json records it: config.yaml may have been
 * edited since it started, and `state.backend` takes a restart.
 */
function runningBackend(paths: SvcPaths, pid: number): RunningBackend {
  const recorded = recordedState(paths, pid)?.state_backend;
  const configured = configuredStop(paths).backend;
  if (recorded === undefined) return configured === undefined ? {} : { backend: configured };
  return configured === undefined || configured === recorded
    ? { backend: recorded }
    : { backend: recorded, configured };
}

/** The note on a config.yaml that names another state backend than the running gateway's. */
export function backendChange(backend: Pick<RunningBackend, "configured">): string {
  return backend.configured === undefined
    ? ""
    : ` (config.yaml now names state.backend: ${backend.configured}, which a restart would use)`;
}

/** What becomes of the running gateway's runs still going when its drain ends, with `backendChange`. */
function afterDrain(backend: RunningBackend): string {
  return `${leftAtDrainEnd(backend.backend)}${backendChange(backend)}`;
}

/** The default wait and the state backend, from config.yaml as it is now. */
function configuredStop(paths: SvcPaths): { waitSeconds: number; backend?: string } {
  try {
    const { config } = loadConfig({ home: paths.home });
    return {
      waitSeconds: defaultStopWaitSeconds(config.gateway.drain_timeout_seconds),
      backend: config.state.backend,
    };
  } catch {
    // A config that no longer loads: the running gateway read an older one.
    return { waitSeconds: defaultStopWaitSeconds(0) };
  }
}

/**
 * `svc gateway stop`'s default wait for the gateway `pid`: from the drain it runs with, as its gateway.json
 * records it (its start's, or its last applied reload's), not from a config.yaml edited since (a shorter
 * drain written but not reloaded, a file the reload refused) — else the wait could end mid-drain and the
 * command advise a `kill -9` of a gateway that is still finishing its runs. config.yaml's for a gateway of
 * an older svc, which records none.
 */
export function stopWaitSeconds(paths: SvcPaths, pid: number): number {
  const recorded = recordedState(paths, pid)?.drain_timeout_seconds;
  return typeof recorded === "number" && Number.isFinite(recorded) && recorded >= 0
    ? defaultStopWaitSeconds(recorded)
    : configuredStop(paths).waitSeconds;
}

async function stop(options: { timeout?: string }): Promise<void> {
  const paths = svcPaths(svcHome());
  const givenSeconds = options.timeout === undefined ? undefined : parseSecondsOption(options.timeout);
  // An SVC_HOME this user may not look into: no gateway is known not to run there.
  assertHomeInSight(paths.pidFile, paths.home);
  const hadFile = existsSync(paths.pidFile);
  const pid = await runningHere(paths, elsewhereStop);
  if (pid === undefined) {
    const unnamed = unnamedGateway(paths);
    if (unnamed !== undefined) throw new SvcError("state_refused", `the gateway is ${unnamed.message}`);
    process.stdout.write(
      !hadFile
        ? "The gateway is not running\n"
        : existsSync(paths.pidFile)
          ? `The gateway is not running (${paths.pidFile} is stale, and could not be removed: SVC_HOME cannot be written — the next start removes it once it can)\n`
          : `The gateway is not running (removed the stale ${paths.pidFile})\n`,
    );
    return;
  }
  const backend = runningBackend(paths, pid);
  const timeoutSeconds = givenSeconds ?? stopWaitSeconds(paths, pid);
  // A stop already under way (an earlier svc gateway stop that gave up waiting, a supervisor's SIGTERM): said,
  // with since when, rather than as a stop that begins now; the gateway only notes the second signal.
  const stoppingSince = recordedState(paths, pid)?.stopping_since;
  process.kill(pid, "SIGTERM");
  // A suspended gateway (Ctrl-Z on svc gateway run, SIGSTOP) takes the SIGTERM only once it runs again:
  // continued, as systemd continues what it stops.
  continueProcess(pid);
  process.stdout.write(stopNotice(pid, backend.backend, backend.configured, stoppingSince));
  const deadline = performance.now() + timeoutSeconds * 1000;
  // A gateway that exited under a parent that has not collected it yet (a zombie) has stopped.
  while (processRunning(pid)) {
    if (performance.now() > deadline) {
      throw new SvcError(
        "gateway_timeout",
        `the gateway (pid ${pid}) is still running after ${timeoutSeconds}s — wait, or kill it with: kill -9 ${pid} (accepted runs are kept, in the state journal or Redis, and run at the next start)`,
      );
    }
    await sleep(100);
  }
  // Only the stopped gateway's record: a gateway started since (by another `svc gateway start`, or one of
  // another PID namespace, maybe with the same pid there, that took this home over) wrote its own.
  const stateFile = gatewayStateFile(paths);
  if (recordsPidHere(stateFile, pid)) rmSync(stateFile, { force: true });
  process.stdout.write("Gateway stopped\n");
}

/** `status` of a gateway of another PID namespace: running when its /health answers, else unknown (exit 4). */
async function elsewhereStatus(paths: SvcPaths, err: GatewayElsewhereError): Promise<void> {
  const found = await askElsewhere(paths, err);
  if (found.answers === true) {
    process.stdout.write(
      `Gateway: running (pid ${err.pid} of another PID namespace, ${err.namespace}, which this command cannot check: its /health answers)\nListening: ${found.address}\nHealth: ok\n`,
    );
    return;
  }
  process.stdout.write(`Gateway: unknown — ${err.message}\nHealth: ${elsewhereSilence(paths, found)}\n`);
  process.exitCode = 4;
}

/**
 * `stop` of a gateway of another PID namespace, which it cannot signal (exit 2): where it runs when its
 * /health answers, else that its gateway.pid was likely left by a gateway that is gone, and how to clear it.
 */
async function elsewhereStop(paths: SvcPaths, err: GatewayElsewhereError): Promise<SvcError> {
  const found = await askElsewhere(paths, err);
  const where = `(${err.namespace}; this command runs in ${err.here})`;
  const there = "docker exec <container> svc gateway stop, or on the host";
  if (found.answers === true)
    return new SvcError(
      "usage",
      `${runsElsewhere(paths, err, found)} — stop it where it was started (${there}), or with kill -TERM ${err.pid} in that namespace`,
    );
  if (found.answers === undefined)
    return new SvcError("usage", `${err.message}\nHealth: ${elsewhereSilence(paths, found)}`);
  const stateFile = gatewayStateFile(paths);
  const asked =
    found.other === true
      ? `what answers /health at ${found.address}, where ${stateFile} says it listens, is not that gateway (another program, or another gateway: its answer lacks the instance id recorded there)`
      : `nothing answers /health at ${found.address}, where ${stateFile} says it listens`;
  const likely =
    found.stoppingSince === undefined
      ? "most likely the gateway that wrote it is gone (killed, or its container stopped) and left it behind"
      : `it began to stop at ${found.stoppingSince}: it may still be finishing its runs there, or be gone and have left it behind`;
  return new SvcError(
    "usage",
    `${paths.pidFile} names pid ${err.pid} of another PID namespace ${where}, which this command cannot signal, and ${asked} — ${likely}; or this command cannot reach that address. Check where it was started (svc gateway status there, docker ps): if no gateway runs there any more, remove ${paths.pidFile} and ${stateFile}; if one does, stop it there (${there})`,
  );
}

/** `3.2 s`: how long ago gateway.pid was touched, as a message says it. */
const touchedSeconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;

/**
 * `start` and `run` beside a gateway.pid of another PID namespace: refused (exit 2) while a gateway
 * answers /health at the address its gateway.json records, or touches gateway.pid (every HEARTBEAT_MS, for
 * its whole life: a live gateway there that this command cannot reach). Once this command has watched it
 * stay untouched for FOREIGN_UNTOUCHED_MS of its monotonic clock, the files are a killed gateway's (its
 * container stopped, or restarted: a new PID namespace): they are removed, said with `say`, and the start
 * goes on (undefined). The wait is said once; gateway.pid is watched that whole time however long ago its
 * time says it was touched, as that time is of a clock that may have been stepped (NTP at boot, a VM
 * resumed) or be another's.
 */
export async function elsewhereStart(
  paths: SvcPaths,
  err: GatewayElsewhereError,
  say: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  wait: (ms: number) => Promise<unknown> = sleep,
): Promise<SvcError | undefined> {
  /** When gateway.pid was last touched, as the wait found it first. */
  let waitedFrom: number | undefined;
  for (;;) {
    // The state directory's lock, left by the same killed gateway, is watched alongside: the gateway's own
    // wait for it (`awaitForeignLock`) counts this time, rather than watching it FOREIGN_UNTOUCHED_MS more.
    watchForeignLock(stateDir(paths.home));
    const found = await askElsewhere(paths, err);
    if (found.answers === true)
      return new SvcError(
        "usage",
        `a gateway already runs on this SVC_HOME: pid ${err.pid} of another PID namespace (${err.namespace}; this command runs in ${err.here}) answers /health at ${found.address} — stop it where it was started (docker exec <container> svc gateway stop, or on the host) before starting one here, or use another SVC_HOME`,
      );
    const touched = pidFileTouched(paths);
    if (touched === undefined) return undefined; // removed meanwhile: the claim looks again
    if (touched.untouchedMs >= FOREIGN_UNTOUCHED_MS) {
      removeLeftElsewhere(paths, err);
      say(
        `[gateway] ${paths.pidFile} named pid ${err.pid} of another PID namespace (${err.namespace}; this command runs in ${err.here}), untouched for ${touchedSeconds(touched.untouchedMs)} while this command watched it (a running gateway touches it every ${HEARTBEAT_MS / 1000} s) and not answering /health: left by a gateway killed there (its container stopped or restarted) — removed it and ${gatewayStateFile(paths)}, starting`,
      );
      return undefined;
    }
    // Touched again while this command waited: its gateway runs (one this command cannot reach).
    if (waitedFrom !== undefined && touched.mtimeMs !== waitedFrom)
      return new SvcError(
        "usage",
        `a gateway already runs on this SVC_HOME: ${paths.pidFile} names pid ${err.pid} of another PID namespace (${err.namespace}; this command runs in ${err.here}), and that gateway touched it while this command watched it, ${touchedSeconds(touched.ms)} ago by this command's clock (a running gateway touches it every ${HEARTBEAT_MS / 1000} s; one left untouched for ${FOREIGN_UNTOUCHED_MS / 1000} s is taken for a killed gateway's) — stop it where it was started (docker exec <container> svc gateway stop, or on the host) before starting one here, or use another SVC_HOME\nHealth: ${elsewhereSilence(paths, found)}`,
      );
    if (waitedFrom === undefined)
      say(
        `[gateway] ${paths.pidFile} names pid ${err.pid} of another PID namespace (${err.namespace}; this command runs in ${err.here}), which does not answer /health${found.answers === false && found.other === true ? ` (${otherAnswers(found.address)}, where ${gatewayStateFile(paths)} says it listens: not that gateway)` : ""}: waiting up to ${Math.ceil((FOREIGN_UNTOUCHED_MS - touched.untouchedMs) / 1000)} s for it to stay untouched for ${FOREIGN_UNTOUCHED_MS / 1000} s while this command watches it, as a killed gateway's does (a container restarted after a SIGKILL or an OOM kill) — a running gateway touches it every ${HEARTBEAT_MS / 1000} s, and this start is then refused`,
      );
    waitedFrom = touched.mtimeMs;
    await wait(Math.min(1000, FOREIGN_UNTOUCHED_MS - touched.untouchedMs + 50));
  }
}

/**
 * The running gateway's pid, or what a gateway of another PID namespace says of itself, made an error by
 * `refuse`; none (undefined) when `refuse` finds it gone (its files removed).
 */
async function runningHere(
  paths: SvcPaths,
  refuse: (paths: SvcPaths, err: GatewayElsewhereError) => Promise<SvcError | undefined>,
): Promise<number | undefined> {
  try {
    return runningPid(paths);
  } catch (err) {
    if (!(err instanceof GatewayElsewhereError)) throw err;
    const refused = await refuse(paths, err);
    if (refused !== undefined) throw refused;
    // Its files removed; still there (not removable), they are said as they are.
    return runningPid(paths);
  }
}

/**
 * A live gateway of this home that `gateway.pid` does not name (the file removed or overwritten while it
 * runs: a tmp cleaner, a hand edit), found by the pid and port its `gateway.json` records: said with how to
 * stop it, rather than "not running" while it holds the port and the state directory.
 */
function unnamedGateway(paths: SvcPaths): { readonly pid: number; readonly message: string } | undefined {
  const state = readGatewayState(gatewayStateFile(paths));
  if (state === undefined || !Number.isInteger(state.port)) return undefined;
  const found = recordedGatewayOn(paths, state.port);
  if (found === undefined || found.named) return undefined;
  return {
    pid: found.pid,
    message: `running (pid ${found.pid}), but ${paths.pidFile} does not name it (removed or overwritten since it started), so svc gateway stop cannot find it — stop it with kill ${found.pid} (it stops gracefully and removes its files), then start it again`,
  };
}

async function status(): Promise<void> {
  const paths = svcPaths(svcHome());
  assertHomeInSight(paths.pidFile, paths.home);
  let pid: number | undefined;
  try {
    pid = runningPid(paths);
  } catch (err) {
    if (!(err instanceof GatewayElsewhereError)) throw err;
    await elsewhereStatus(paths, err);
    return;
  }
  if (pid === undefined) {
    const unnamed = unnamedGateway(paths);
    if (unnamed !== undefined) {
      const state = recordedState(paths, unnamed.pid);
      const listening =
        state === undefined || state.port === 0 ? "no HTTP listener" : listenAddress(state.host, state.port);
      process.stdout.write(`Gateway: ${unnamed.message}\nListening: ${listening}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write("Gateway: not running\n");
    process.exitCode = 3;
    return;
  }
  if (stillStarting(paths, pid)) {
    // Its claim alone (waiting for the state directory's lock, for Redis): no address to ask yet, neither the
    // configuration's (port 0, or --port/--host) nor any other, as a command of another namespace says it.
    process.stdout.write(
      `Gateway: running (pid ${pid}), still starting\nListening: not recorded yet\nHealth: not asked — ${notRecordedYet(gatewayStateFile(paths), "the gateway")}\n`,
    );
    process.exitCode = 4;
    return;
  }
  const recorded = recordedState(paths, pid);
  const { host, port } = recorded ?? gatewayAddress(paths, pid);
  const overridden = recorded === undefined ? addressOptionsOf(pid) : [];
  if (overridden.length > 0) {
    // Started with --host or --port: the configuration's address is not where it listens.
    process.stdout.write(
      `Gateway: running (pid ${pid})\nListening: unknown — ${gatewayStateFile(paths)}, where the gateway records where it listens, cannot be read, and it was started with ${overridden.join(" and ")}, so the configuration does not say: it is written once the gateway listens, and again at a restart\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (port === 0 && recorded === undefined) {
    // The configuration's port 0: a port the gateway picked, which only its unreadable record names.
    process.stdout.write(
      `Gateway: running (pid ${pid})\nListening: unknown — ${gatewayStateFile(paths)}, where the gateway records the port it picked (platforms.webhook.port is 0), cannot be read: it is written once the gateway listens, and again at a restart\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (port === 0) {
    // A listener never has port 0: the gateway recorded that it runs without one (adapter off).
    process.stdout.write(
      `Gateway: running (pid ${pid})\nListening: no HTTP listener — webhook adapter off, ${withoutListener(runningBackend(paths, pid))}\n`,
    );
    return;
  }
  const answer = await health(host, port, recorded?.instance);
  const ok = answer === "ok";
  const stopping = ok ? undefined : recordedState(paths, pid)?.stopping_since;
  const backend = runningBackend(paths, pid);
  const suspended = !ok && processStat(pid)?.state === "T";
  const why =
    stopping !== undefined
      ? `stopping since ${stopping} (no new requests; runs in flight finish or ${afterDrain(backend)})${
          suspended
            ? `; its process is suspended (SIGSTOP): the drain waits — kill -CONT ${pid}, or svc gateway stop, which resumes it`
            : ""
        }`
      : suspended
        ? `not answering — its process is suspended (Ctrl-Z in the terminal of svc gateway run, or SIGSTOP), and requests wait: resume it with fg in that terminal, or kill -CONT ${pid}`
        : answer === "other"
          ? `not answering — ${otherAnswers(listenAddress(host, port))}, not this gateway (its answer lacks the instance id ${gatewayStateFile(paths)} records): find what listens there with ${findListener(port)}`
          : "not answering";
  // A config.yaml edited since the start may name another state backend: said (the stop's line says it there).
  const changed =
    stopping === undefined && backend.configured !== undefined
      ? `State backend: ${backend.backend}${backendChange(backend)}\n`
      : "";
  process.stdout.write(
    `Gateway: running (pid ${pid})\nListening: ${listenAddress(host, port)}\nHealth: ${ok ? "ok" : why}\n${changed}`,
  );
  if (!ok) process.exitCode = 1;
}

/** `svc gateway start|stop|status|setup` (registered on the `gateway` command). */
export function registerGatewayLifecycleCommands(gateway: Command): void {
  gateway
    .command("start", { isDefault: true })
    .description(
      "start the gateway in the background (also plain svc gateway); returns once it answers /health",
    )
    .option("--host <host>", "bind address (overrides platforms.webhook.host)")
    .option("--port <port>", "listen port (overrides platforms.webhook.port; 0 picks a free port)")
    .option("--timeout <seconds>", `how long to wait for /health (default ${START_WAIT_SECONDS})`)
    .allowExcessArguments()
    .action(start);
  refuseUnknownCommandBeforeOptions(gateway);
  gateway
    .command("stop")
    .description("stop the background gateway gracefully (flushes coalesced events, finishes runs)")
    .option(
      "--timeout <seconds>",
      "how long to wait for it to exit (default: twice gateway.drain_timeout_seconds + 30, at least 60)",
    )
    .action(stop);
  gateway
    .command("status")
    .description(
      "is the gateway running, where, and does it answer /health (exit 3 when not running, 4 when it is still starting, or when its pid is of another PID namespace and its /health does not answer)",
    )
    .action(status);
  gateway
    .command("setup")
    .description("enable the webhook adapter, choose its port and global secret (interactive, or with flags)")
    .option("--enable", "enable the webhook adapter")
    .option("--disable", "disable the webhook adapter")
    .option("--port <port>", "listen port")
    .option("--secret <secret>", "global secret (WEBHOOK_SECRET; - reads it from stdin)")
    .option("--secret-file <path>", SECRET_FILE_HELP)
    .option("--generate-secret", "generate a new global secret")
    .option("--non-interactive", "use the flags and defaults without asking")
    .action((options: SetupOptions) => runSetup(options));
}

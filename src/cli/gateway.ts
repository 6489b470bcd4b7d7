import { rmSync } from "node:fs";
import type { Command } from "commander";
import { systemClock } from "../clock.js";
import { type SvcPaths, svcHome, svcPaths } from "../config/paths.js";
import { describeError, StoppedWhileStarting, StoppedWhileWaiting, SvcError } from "../errors.js";
import type { Gateway } from "../gateway/index.js";
import {
  forgetRecordBeforeClaim,
  GatewayElsewhereError,
  type GatewayState,
  gatewayStateFile,
  pidFileNamesThisProcess,
  recordClaim,
  recordsThisProcess,
  restoreRecordBeforeClaim,
  runningPid,
} from "../io/gatewayState.js";
import { leaveGoneDirectory } from "../io/goneDirectory.js";
import { unfinishedWork } from "../io/heldSignals.js";
import { assertHomeWritable, homeNotWritable } from "../io/homeWritable.js";
import { createLogger } from "../io/log.js";
import { pidNamespace } from "../io/pidNamespace.js";
import { adoptForeignLockWatch } from "../io/state/journal/dirLock.js";
import { writeFileAtomic, writeJsonAtomic } from "../io/stores/atomicFile.js";
import { createLockFile, heartbeat } from "../io/stores/fileLock.js";
import { releaseStopSignals, reloadAskedWhileLoading, STOP_SIGNALS } from "./earlySignals.js";
import { boundHeapGrowth } from "./gatewayHeap.js";
import {
  elsewhereStart,
  LOCK_WATCHED_ENV,
  registerGatewayLifecycleCommands,
  stoppingGateway,
  stopSignalAgain,
  stopSignalWhileFinishing,
} from "./gatewayLifecycle.js";
import { parseHostOption, parsePortOption } from "./options.js";
import { settledReloader } from "./settledReload.js";

/** `--inspect` without a port. */
const DEFAULT_INSPECT_PORT = 8090;

interface RunOptions {
  host?: string;
  port?: string;
  /** `--inspect [port]`: attach the Stately inspector bridge (docs/inspector.md). */
  inspect?: string | boolean;
}

/** The inspector's page is opened at this port, so "any free one" (0) cannot be shown: 1-65535. */
function parseInspectPort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535)
    throw new SvcError("usage", `--inspect: expected a port number (1-65535), got "${text}"`);
  return port;
}

/**
 * Makes gateway.pid this process's before the gateway starts. The file is created exclusively: two runs of
 * one home started at once (two `svc gateway start`) both find no gateway running, and with state.backend:
 * redis (no state directory to lock) both would start, the first one then unseen by `svc gateway stop|status`.
 * Its pid's PID namespace goes into gateway.json at once (`recordClaim`): the start may wait (for the state
 * directory's lock, for a Redis loading its data) long before the gateway writes its whole record there.
 */
function claimPidFile(paths: SvcPaths): void {
  for (let attempt = 0; attempt < 3; attempt++) {
    const other = runningPid(paths);
    if (other !== undefined)
      throw (
        stoppingGateway(other, paths) ??
        new SvcError(
          "usage",
          `a gateway is already running for ${paths.home} (pid ${other}, ${paths.pidFile}) — stop it with svc gateway stop, or use another SVC_HOME`,
        )
      );
    try {
      if (createLockFile(paths.pidFile, `${process.pid}\n`)) {
        recordClaim(paths);
        return;
      }
    } catch (err) {
      throw homeNotWritable(paths.home, err);
    }
    // Another run claimed it between the check and the creation: the check names it (or removes its
    // file, when that run already ended).
  }
  throw new SvcError("usage", `${paths.pidFile} keeps changing — is another gateway starting? Try again`);
}

/**
 * What `svc gateway start` watched of the state directory's lock of another PID namespace before it spawned
 * this gateway (LOCK_WATCHED_ENV): counted by this gateway's wait for it. Removed from the environment, which
 * agents inherit.
 */
function lockWatchedByStart(): void {
  const given = process.env[LOCK_WATCHED_ENV];
  if (given === undefined) return;
  delete process.env[LOCK_WATCHED_ENV];
  try {
    const seen: unknown = JSON.parse(given);
    if (typeof seen !== "object" || seen === null) return;
    const { file, text, mtimeMs, untouchedMs } = seen as Record<string, unknown>;
    if (
      typeof file === "string" &&
      typeof text === "string" &&
      typeof mtimeMs === "number" &&
      typeof untouchedMs === "number"
    )
      adoptForeignLockWatch({ file, text, mtimeMs, untouchedMs });
  } catch {
    // Not start's JSON: the lock is watched from here on, as by `svc gateway run`.
  }
}

/** `svc gateway run`: foreground gateway; SIGHUP reloads config.yaml, SIGINT/SIGTERM stop cleanly (exit 0). */
export async function runGatewayForeground(options: RunOptions): Promise<void> {
  const port = options.port === undefined ? undefined : parsePortOption(options.port);
  const host = options.host === undefined ? undefined : parseHostOption(options.host);
  const inspectPort =
    typeof options.inspect === "string" ? parseInspectPort(options.inspect) : DEFAULT_INSPECT_PORT;
  const paths = svcPaths(svcHome());
  lockWatchedByStart();
  // A second gateway of the same home would take over gateway.pid and, when it exits, leave the first
  // one running where `svc gateway stop|status` no longer see it.
  // First: a directory in gateway.pid's place is said as svc config check says it.
  assertHomeWritable(paths.home);
  try {
    claimPidFile(paths);
  } catch (err) {
    // A gateway.pid of another PID namespace: said as `svc gateway start` says it, its /health asked, and
    // replaced when a gateway killed there left it (untouched). A stop signal meanwhile is held (earlySignals)
    // and stops the gateway once it has claimed the file, before it starts.
    if (!(err instanceof GatewayElsewhereError)) throw err;
    const refused = await elsewhereStart(paths, err);
    if (refused !== undefined) throw refused;
    claimPidFile(paths);
  }
  // Touched every HEARTBEAT_MS while this gateway runs (a timer that keeps no process alive): a command of
  // another PID namespace, which cannot check its pid, tells it from a killed gateway's by that. Only while it
  // names this gateway: one that took this home over while this one was paused or hung wrote its own, maybe
  // with this pid's number in its namespace (two containers' pid 1), and once that one is killed too its file
  // must be left untouched for a start to take it over. Not at all once the state directory was taken over
  // (`onTakenOver` below): this gateway answers 503 and runs nothing from then on.
  const stopBeat = heartbeat(paths.pidFile, `${process.pid}\n`, {
    holds: () => pidFileNamesThisProcess(paths),
  });
  // A reader of stdout that went away (`svc gateway run | head`, a log collector that died) makes every
  // later write fail with EPIPE, an 'error' event that would kill the gateway mid-run; gateway.log keeps
  // every line, so stdout is given up instead.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
  // Created here, not in startGateway, so what happens around it (a reload refused, the stop) reaches
  // gateway.log too, where a gateway started in the background is looked at.
  const logger = createLogger({ file: paths.gatewayLog, buffered: true });
  let gateway: Gateway | undefined;
  let stopSignal: string | undefined;
  /** What gateway.json says of this gateway, once written. */
  let recorded: GatewayState | undefined;
  let exitCode = 0;
  /** Aborted by a stop signal while the gateway starts (`GatewayOptions.stopping`). */
  const starting = new AbortController();
  const stateFile = gatewayStateFile(paths);
  /** The files of this gateway that could not be removed, each said once (the stop, then the exit, try). */
  const kept = new Set<string>();
  const remove = (file: string) => {
    try {
      rmSync(file, { force: true });
    } catch (err) {
      // An SVC_HOME made read-only while the gateway ran: the stop goes on; the file names a process
      // that is gone by then, which status, start and stop take for stale and remove.
      if (kept.has(file)) return;
      kept.add(file);
      logger.warn(
        `[gateway] ${file} could not be removed (${describeError(err)}) — the next svc gateway status, start or stop removes it (stale) once it can be written there again`,
      );
    }
  };
  // Only while they are this gateway's: another gateway that took this home over while this one was paused
  // or hung (its ERROR says to stop this one) wrote its own, maybe with this pid's number in its namespace.
  const removePid = () => {
    stopBeat();
    if (pidFileNamesThisProcess(paths)) remove(paths.pidFile);
    // A start that never listened puts back the record its claim was written over (another PID namespace's
    // gateway of this home, which may still serve); else this gateway's record goes.
    if (recordsThisProcess(stateFile) && (recorded !== undefined || !restoreRecordBeforeClaim(stateFile)))
      remove(stateFile);
  };
  // gateway.pid is this gateway's from here on, also while it starts: removed however the process ends.
  process.on("exit", removePid);
  /** After the drain: what the exit waits for (a token refresh's answer to be saved), once said. */
  let finishing: string | undefined;
  /** `duringStartup`: the signal came while the gateway started, which took no saved run. */
  const stop = (signal: string, duringStartup = false) => {
    if (stopSignal !== undefined) {
      // A second Ctrl-C while runs drain: said, so the wait is not taken for a hang (the drain is not cut short).
      if (gateway !== undefined && signal.startsWith("SIG"))
        logger.info(
          finishing === undefined
            ? stopSignalAgain(signal, gateway.stateBackend)
            : stopSignalWhileFinishing(signal, finishing),
        );
      return;
    }
    stopSignal = signal;
    if (gateway === undefined) {
      // Still starting: the start ends before its listener opens, or takes no saved run and is stopped
      // once it is up; a wait for Redis (loading its data) ends now.
      starting.abort();
      return;
    }
    logger.info(`[gateway] ${signal} received${duringStartup ? " during startup" : ""}, stopping`);
    // Declared below, before the gateway exists (the stop of one still starting returned above).
    settledReload.stopBegan();
    if (recorded !== undefined && recordsThisProcess(stateFile)) {
      try {
        writeJsonAtomic(stateFile, { ...recorded, stopping_since: new Date().toISOString() });
      } catch {
        // Only `svc gateway status`'s wording depends on it: the stop goes on.
      }
    }
    gateway
      .stop()
      .catch((err: unknown) => logger.error(`[gateway] stop failed: ${describeError(err)}`))
      // A token refresh still waiting for its answer (a reconnect's) is saved before the process exits.
      .then(() =>
        unfinishedWork((held) => {
          finishing = `waiting for ${held.what} to be saved (at most ${Math.ceil(held.atMostMs / 1000)} s)`;
          logger.info(`[gateway] ${finishing}`);
        }),
      )
      .finally(() => {
        removePid();
        // The stop's last word, so the log tells a finished stop from a process killed mid-way.
        logger.info(`[gateway] stopped (exit ${exitCode})`);
        process.exit(exitCode);
      });
  };
  // A bug (an error nothing caught) must not take accepted runs down with the process, as Node's default
  // would: a rejected promise is logged and the gateway goes on; after an uncaught exception its state is
  // unknown, so it stops as on SIGTERM (runs finished or saved) and exits 1 for a supervisor to restart it.
  const stack = (err: unknown) => (err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.on("unhandledRejection", (reason) => {
    logger.error(
      { err: stack(reason) },
      "[gateway] internal error (a promise rejected unhandled); running on",
    );
  });
  process.on("uncaughtException", (err) => {
    logger.error({ err: stack(err) }, "[gateway] internal error (an uncaught exception); stopping");
    exitCode = 1;
    if (gateway === undefined && stopSignal === undefined) process.exit(1);
    stop("internal error");
  });
  // Installed before anything else: a signal that arrives during startup must not kill the process mid-way.
  // SIGQUIT too: some supervisors and images stop with it (nginx's STOPSIGNAL), and its default (the
  // process ends at once, and as a container's pid 1 not at all) would skip the drain.
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop(signal));
  // Node's default for SIGUSR1 opens its debugger on 127.0.0.1:9229, where any local user could run code
  // with the gateway's secrets (a logrotate `kill -USR1` written for another daemon would do it); SIGUSR2's
  // ends the process without its drain. Neither means anything to svc: said, and the gateway runs on.
  for (const signal of ["SIGUSR1", "SIGUSR2"] as const)
    process.on(signal, () =>
      logger.info(
        `[gateway] ${signal} received: ignored — svc gives it no meaning (gateway.log is reopened after a rotation by itself): SIGHUP reloads the configuration, SIGTERM stops the gateway`,
      ),
    );
  /** The start has read config.yaml: a SIGHUP from here on asks for a file the start may not have seen. */
  let configRead = false;
  /** A SIGHUP came while the gateway started, after it read config.yaml: reloaded once the start is done. */
  let reloadOwed = false;
  const reload = (running: Gateway) => {
    try {
      running.reload();
    } catch (err) {
      const why = `[gateway] reload refused, keeping the running config:\n${describeError(err)}`;
      logger.error(why);
      process.stderr.write(`${why}\n`);
      return;
    }
    // The drain the reload applied, where `svc gateway stop` sets its wait from.
    const drain = running.drainTimeoutSeconds();
    if (recorded === undefined || recorded.drain_timeout_seconds === drain) return;
    // Not over the record of a gateway that took this home over meanwhile.
    if (!recordsThisProcess(stateFile)) return;
    const next: GatewayState = { ...recorded, drain_timeout_seconds: drain };
    try {
      writeJsonAtomic(stateFile, next);
      recorded = next;
    } catch {
      // Only the default wait of `svc gateway stop` depends on it: the gateway runs on.
    }
  };
  /** The reload once config.yaml and .env are written whole (a SIGHUP sent mid-save reads the finished file). */
  const settledReload = settledReloader({
    files: [paths.config, paths.env],
    clock: systemClock,
    warn: (line) => logger.warn(line),
    info: (line) => logger.info(line),
    reload: () => {
      if (gateway !== undefined) reload(gateway);
    },
  });
  const reloadBeforeRead = () =>
    logger.info(
      `[gateway] SIGHUP received during startup, before ${paths.config} was read: nothing to reload — the start reads it`,
    );
  process.on("SIGHUP", () => {
    // Still starting: before the read of config.yaml there is nothing to do (the start reads the file);
    // after it, an edit the start did not see (`svc mcp reload` right after a start) waits for its end.
    if (gateway === undefined) {
      if (configRead && stopSignal === undefined) reloadOwed = true;
      else if (!configRead) reloadBeforeRead();
      return;
    }
    // Stopping: a reload would restart MCP servers being stopped.
    if (stopSignal !== undefined) {
      // Said, so `svc mcp reload`'s "see gateway.log" (a stop that began after its check) finds why.
      logger.info(
        `[gateway] SIGHUP received while stopping: ignored — nothing is reloaded; the next start reads ${paths.config}`,
      );
      return;
    }
    void settledReload.sighup();
  });
  const heldSignal = releaseStopSignals();
  if (reloadAskedWhileLoading()) reloadBeforeRead();
  if (heldSignal !== undefined) {
    // Arrived while the gateway's modules loaded: nothing has started, so there is nothing to stop.
    logger.info(`[gateway] ${heldSignal} received during startup, stopping`);
    logger.info(`[gateway] stopped (exit ${exitCode})`);
    process.exit(exitCode);
  }
  if (process.pid === 1)
    // A container's first process inherits the orphans of every process under it (an agent's or MCP
    // server's own children left running as it exits); the kernel leaves them to it to collect, and
    // Node collects only the processes it started itself.
    logger.warn(
      "[gateway] running as pid 1 (a container's first process): the processes that agents, route scripts and MCP servers leave behind are not collected when they exit and pile up as zombies — run svc under an init: docker run --init, init: true in compose, or tini as the entrypoint",
    );
  const npmScript = process.env.npm_lifecycle_event;
  if (npmScript !== undefined && npmScript !== "")
    // npm runs the script in a shell and is the process a supervisor signals: the stop signal reaches
    // npm (and that shell), which may exit before the gateway's graceful stop ends, or not pass it on.
    // INFO, not WARN: `npm start` is the README's way to try svc out, where nothing is wrong.
    logger.info(
      `[gateway] running under npm (npm run ${npmScript}): a supervisor's stop signal goes to npm and the shell it started, not to svc, so the graceful stop may be cut short or never begin — in production run svc gateway run itself (systemd: ExecStart=/path/to/svc gateway run; docker: CMD ["svc", "gateway", "run"])`,
    );
  const gone = leaveGoneDirectory(paths.home);
  if (gone !== undefined)
    logger.warn(
      `[gateway] the working directory is gone (${describeError(gone.gone)}): ${
        gone.stayed === undefined
          ? `the gateway works from SVC_HOME (${paths.home}) instead — command agents and stdio MCP servers start there, and a relative command is taken from there; restart the gateway from a directory that exists to start them in it`
          : `command agents and stdio MCP servers, which start in it, fail to start, and SVC_HOME (${paths.home}) cannot be used instead (${describeError(gone.stayed)}) — restart the gateway from a directory that exists`
      } (systemd: WorkingDirectory=)`,
    );
  try {
    // Loaded here, not at the top: `svc gateway status|stop|setup` never load the gateway itself.
    const { startGateway } = await import("../gateway/index.js");
    boundHeapGrowth();
    // Its port is taken before the gateway starts: one in use stops the start with a message naming the flag.
    const inspector =
      options.inspect === undefined
        ? undefined
        : await (await import("../actors/inspector.js")).startInspector(inspectPort, logger);
    gateway = await startGateway({
      logger,
      onConfigRead: () => {
        configRead = true;
      },
      stopping: starting.signal,
      onTakenOver: stopBeat,
      ...(host === undefined ? {} : { host }),
      ...(port === undefined ? {} : { port }),
      ...(inspector === undefined ? {} : { inspect: inspector.inspect, inspectPort }),
    });
  } catch (err) {
    // A stop signal ended the start's wait (for a Redis loading its data), or the start before it listened:
    // the start ends as a stop does.
    if (stopSignal !== undefined && err instanceof StoppedWhileWaiting) {
      logger.info(`[gateway] ${stopSignal} received during startup (${err.message}), stopping`);
      logger.info(`[gateway] stopped (exit ${exitCode})`);
      process.exit(exitCode);
    }
    if (stopSignal !== undefined && err instanceof StoppedWhileStarting) {
      logger.info(`[gateway] ${stopSignal} received during startup, stopping`);
      logger.info(`[gateway] stopped (exit ${exitCode})`);
      process.exit(exitCode);
    }
    process.stderr.write(`svc: ${describeError(err)}\n`);
    process.exit(1);
  }
  try {
    writeFileAtomic(paths.pidFile, `${process.pid}\n`);
    // Where this gateway listens (`--port 0` picks one): `svc webhook subscribe|test` and `status` read it.
    const namespace = pidNamespace();
    const state: GatewayState = {
      pid: process.pid,
      host: gateway.host,
      port: gateway.port,
      started_at: new Date().toISOString(),
      ...(namespace === undefined ? {} : { pid_namespace: namespace }),
      state_backend: gateway.stateBackend,
      drain_timeout_seconds: gateway.drainTimeoutSeconds(),
      delivery_history: gateway.deliveryHistory,
      // What its /health answers name it by: another listener at this address later is not taken for it.
      instance: gateway.instance,
    };
    writeJsonAtomic(stateFile, state);
    recorded = state;
    forgetRecordBeforeClaim();
  } catch (err) {
    // Unseen by `svc gateway stop|status` and by the next start's check, it must not run on (a disk that
    // filled up since the check above): stopped as on SIGTERM, exit 1.
    const refused = homeNotWritable(paths.home, err);
    logger.error(`[gateway] ${refused.message}; stopping`);
    process.stderr.write(`svc: ${refused.message}\n`);
    exitCode = 1;
    stopSignal = undefined; // a signal held during startup: this stop is the one
    stop("startup failure");
    return;
  }
  const early = stopSignal;
  if (early !== undefined) {
    stopSignal = undefined;
    stop(early, true);
  } else if (reloadOwed) {
    logger.info(
      `[gateway] SIGHUP received during startup, after ${paths.config} was read: reloading it now that the gateway has started`,
    );
    void settledReload.sighup();
  }
  // The uWS loop (or the node:http server) keeps the process alive until stop() exits it.
  await new Promise<never>(() => {});
}

/** `svc gateway ...`; other subcommands (start, stop, status, setup) register on the returned command. */
export function registerGatewayCommands(program: Command): Command {
  const gateway = program.command("gateway").description("run and manage the gateway");
  gateway
    .command("run")
    .description("run the gateway in the foreground (logs to stdout and $SVC_HOME/logs/gateway.log)")
    .option("--host <host>", "bind address (overrides platforms.webhook.host)")
    .option("--port <port>", "listen port (overrides platforms.webhook.port; 0 picks a free port)")
    .option(
      "--inspect [port]",
      `watch the actor system in the Stately inspector (bridge on port, default ${DEFAULT_INSPECT_PORT})`,
    )
    .action(async (options: RunOptions) => runGatewayForeground(options));
  registerGatewayLifecycleCommands(gateway);
  return gateway;
}

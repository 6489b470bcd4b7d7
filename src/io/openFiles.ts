import { closeSync, openSync } from "node:fs";
import { SvcError } from "../errors.js";

/** What to do at this process's limit on open files, and at the system's. */
const RAISE_PROCESS_LIMIT =
  "raise its open-file limit (ulimit -n; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)";
const RAISE_SYSTEM_LIMIT = "close programs that hold many, or raise the system's limit (sysctl fs.file-max)";

/**
 * Why a process, socket or file could not be had, when the cause is a limit on open files: EMFILE (this
 * process's, `ulimit -n`) or ENFILE (the whole system's); undefined for any other error code. The bare
 * `spawn node EMFILE` said neither which limit nor how to raise it.
 */
export function openFilesProblem(code: string | undefined): string | undefined {
  if (code === "EMFILE")
    return `too many open files (EMFILE: this process has as many open as its limit allows) — ${RAISE_PROCESS_LIMIT}`;
  if (code === "ENFILE") return `too many open files on this system (ENFILE) — ${RAISE_SYSTEM_LIMIT}`;
  return undefined;
}

/**
 * What to do about a file or directory that could not be opened because this process is at its limit on open
 * files (or the system at its own), or undefined for any other error: the bare `EMFILE: too many open files,
 * open '…/cron/jobs.json'` read as if that file were at fault.
 */
export function openFilesFix(err: unknown, notAt = "this file"): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EMFILE")
    return `the gateway has as many files open as its limit allows, not a problem of ${notAt}: ${RAISE_PROCESS_LIMIT}`;
  if (code === "ENFILE")
    return `the system has as many files open as its limit allows, not a problem of ${notAt}: ${RAISE_SYSTEM_LIMIT}`;
  return undefined;
}

/** The descriptors starting a process takes for a moment (its three pipes, and libuv's own): measured, 8. */
const START_DESCRIPTORS = 8;

/**
 * Why no process can be started now for want of descriptors (`openFilesProblem`), or undefined; asked before
 * each start through execa. Node's spawn, short of them, returns a process without pipes, on which execa
 * throws a TypeError of its own (`subprocess.stdio is not iterable`), and that process's 'error' event (`spawn
 * cat EMFILE`), which nothing listens to then, ends the gateway as an uncaught exception. Costs 16 system
 * calls, against the milliseconds of the start.
 */
export function startDescriptorsProblem(): string | undefined {
  const opened: number[] = [];
  try {
    while (opened.length < START_DESCRIPTORS) opened.push(openSync("/dev/null", "r"));
    return undefined;
  } catch (err) {
    return openFilesProblem((err as NodeJS.ErrnoException).code);
  } finally {
    for (const fd of opened) closeSync(fd);
  }
}

/**
 * The model agent's code (the AI SDK, undici) could not be loaded: at the limit on open files, the bare
 * `EMFILE: too many open files, open '…'` said neither the limit nor how to raise it, nor that Node keeps
 * that failure for the life of the process. Any other error is thrown as it is.
 */
export function modelAgentNotLoaded(err: unknown): never {
  const openFiles = openFilesProblem((err as NodeJS.ErrnoException).code);
  if (openFiles === undefined) throw err;
  throw new SvcError(
    "agent_failed",
    `the model agent could not be loaded: ${openFiles}; then restart the gateway (a module that failed to load is not loaded again by this process)`,
    { cause: err },
  );
}

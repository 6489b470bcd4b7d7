import { interpreterProblem } from "./executable.js";
import { followWorkingDirectory } from "./goneDirectory.js";
import { openFilesProblem, startDescriptorsProblem } from "./openFiles.js";
import type { ProcessGroups } from "./processGroups.js";

export interface ProcessRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly input: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly cwd?: string;
  readonly signal?: AbortSignal;
  /** Bytes of stdout kept (default 4 MiB); past it the run fails. Only stderr's last 64 KiB are kept. */
  readonly maxBuffer?: number;
  /** Notes the process group while it runs (a start after a SIGKILL stops what was left running). */
  readonly groups?: ProcessGroups;
  /** The run's name for the group's note when its run is not journaled (`ProcessGroups.started`). */
  readonly notRunAgain?: string;
  /** The named profile of that run, noted with its name (`ProcessGroups.started`). */
  readonly notRunAgainProfile?: string;
  /**
   * How a failure to start names `file` when a `${VAR}` of config.yaml gave it (`describe`: the file's text,
   * `"${AGENT_BIN}" (the value it gives is not shown)`): never by its value or its path.
   */
  readonly hidden?: string;
}

export type ProcessResult =
  | { readonly ok: true; readonly stdout: string; readonly stderr: string }
  | {
      readonly ok: false;
      readonly why: string;
      readonly stderr: string;
      /** Stopped at `timeoutMs`: the caller may name the setting behind it. */
      readonly timedOut?: true;
      /** The signal that ended it, when one did (not svc's timeout or cancel). */
      readonly killedBy?: NodeJS.Signals;
      /** The code it exited with, when it exited (not svc's timeout or cancel). */
      readonly exitCode?: number;
      /** Its standard output passed `maxBuffer` bytes (given as `4 MiB`): the process was stopped there. */
      readonly stdoutOver?: string;
    };

/** The safe base environment for processes fed untrusted input: never our secrets. */
export function minimalEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"]) {
    const value = source[key];
    if (value !== undefined) env[key] = value;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return env;
}

/** Characters of stderr kept: the end, where an error message is. */
const STDERR_KEPT = 64 * 1024;

/** `4 MiB` for a whole number of MiB, else the bytes. */
function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * How long the pipes are read after the process exits. A process it moved out of its group (`setsid`, a
 * daemon starting) outlives the group's kill and can hold stdout or stderr open for as long as it runs: the
 * result would wait for it, past the timeout. What the process wrote is read for this moment, then the pipes
 * are closed.
 */
export const PIPES_AFTER_EXIT_MS = 250;

/** Signals every process of the group led by `pid` (ESRCH: the group is already gone). */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // No process left in the group.
  }
}

/**
 * Runs an argv (never a shell string) with `input` on stdin, only `env` in its environment, and a timeout.
 * The process leads its own process group; when it exits (by itself, on timeout or on cancel) whatever it
 * left running in that group is killed, because such a child (`sleep 60` in a shell script) keeps the
 * output pipes open and the result would otherwise wait for it, past the timeout; a process it moved out of
 * the group is not waited for either (`PIPES_AFTER_EXIT_MS`).
 */
export async function runProcess(request: ProcessRequest): Promise<ProcessResult> {
  // Loaded at the first process: a command that starts none does not pay for the module.
  const { execa } = await import("execa");
  const maxBuffer = request.maxBuffer ?? 4 * 1024 * 1024;
  const short = startDescriptorsProblem();
  if (short !== undefined) return { ok: false, why: `could not be started (${short})`, stderr: "" };
  if (request.cwd === undefined) followWorkingDirectory();
  const subprocess = execa(request.file, [...request.args], {
    input: request.input,
    env: request.env,
    extendEnv: false,
    timeout: request.timeoutMs,
    forceKillAfterDelay: 2000,
    maxBuffer,
    // Bytes, so maxBuffer is counted in bytes (with utf8 execa counts characters: 6 MiB of `é` passed 4 MiB).
    encoding: "buffer",
    // stderr is diagnostics: a chatty program (debug logging) must not fail on its volume, so only its
    // tail is kept, read below, instead of counting against maxBuffer.
    buffer: { stdout: true, stderr: false },
    reject: false,
    stripFinalNewline: false,
    detached: true,
    ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
    ...(request.signal === undefined ? {} : { cancelSignal: request.signal }),
  });
  let stderrTail = "";
  subprocess.stderr?.setEncoding("utf8");
  subprocess.stderr?.on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_KEPT);
  });
  const pid = subprocess.pid;
  if (pid !== undefined) request.groups?.started(pid, request.notRunAgain, request.notRunAgainProfile);
  // Past the cap the whole group is stopped at once, as at the timeout: execa only closes the pipe, which a
  // process that ignores EPIPE (or is busy elsewhere) writes on past, up to the timeout.
  let stdoutBytes = 0;
  const countStdout = (chunk: Uint8Array) => {
    stdoutBytes += chunk.length;
    if (stdoutBytes <= maxBuffer) return;
    subprocess.stdout?.off("data", countStdout);
    signalGroup(pid, "SIGTERM");
  };
  subprocess.stdout?.on("data", countStdout);
  let closePipes: ReturnType<typeof setTimeout> | undefined;
  // The timeout ends the whole group (SIGTERM), as a cancel does: execa's own timeout signals only the
  // process it started, so a shell script waiting on a foreground child (`sleep 600`) got nothing it could
  // act on (its TERM trap runs once that child ends) until execa's SIGKILL 2 s later, and the answer waited.
  let timedOut = false;
  const timeout = setTimeout(() => {
    timedOut = true;
    signalGroup(pid, "SIGTERM");
  }, request.timeoutMs);
  subprocess.once("exit", () => {
    clearTimeout(timeout);
    signalGroup(pid, "SIGKILL");
    if (pid !== undefined) request.groups?.ended(pid);
    closePipes = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, PIPES_AFTER_EXIT_MS);
  });
  // Cancel signals the whole group at once: execa's own kill comes a tick later, and at shutdown the
  // gateway exits before that, leaving the run (saved to run again at the next start) running orphaned.
  const onCancel = () => signalGroup(subprocess.pid, "SIGTERM");
  request.signal?.addEventListener("abort", onCancel, { once: true });
  const result = await subprocess.finally(() => {
    request.signal?.removeEventListener("abort", onCancel);
    clearTimeout(timeout);
    clearTimeout(closePipes);
  });
  const stderr = stderrTail;
  // Before the exit code: past the cap the process is stopped (or dies writing to the closed pipe), and its
  // "exited with code 1" would hide why.
  if (result.isMaxBuffer) {
    const cap = describeBytes(maxBuffer);
    return { ok: false, why: `standard output over ${cap}`, stderr, stdoutOver: cap };
  }
  // Either timer may come first (execa's or the group's): the process killed by that SIGTERM timed out too.
  if (result.timedOut || (timedOut && !result.isCanceled))
    return { ok: false, why: `timed out after ${request.timeoutMs} ms`, stderr, timedOut: true };
  if (result.isCanceled) return { ok: false, why: "canceled", stderr };
  if (result.failed) {
    // execa's shortMessage for a signal ("Command was killed with SIGKILL (Forced termination): <file>")
    // would read "agent command Command was killed ..." after the caller's prefix.
    const why =
      result.exitCode !== undefined
        ? `exited with code ${result.exitCode}`
        : result.signal !== undefined
          ? `was killed by ${result.signal}${result.signalDescription ? ` (${result.signalDescription})` : ""}`
          : // Not started (ENOENT, EACCES): execa's shortMessage is two lines and starts with "Command".
            `could not be started (${notStartedReason(request, result.code) ?? startError(request, result.code, result.originalMessage) ?? "no reason given"})`;
    if (result.exitCode !== undefined) return { ok: false, why, stderr, exitCode: result.exitCode };
    return result.signal !== undefined
      ? { ok: false, why, stderr, killedBy: result.signal }
      : { ok: false, why, stderr };
  }
  const stdout = result.stdout instanceof Uint8Array ? new TextDecoder().decode(result.stdout) : "";
  return { ok: true, stdout, stderr };
}

/**
 * ENOENT for a program whose file is there: the system found no interpreter (a `#!` line naming one this
 * machine lacks, or ending in the carriage return of a file saved with Windows line endings) or loader.
 * The lookup is the start's: the request's PATH (`/usr/bin:/bin` without one), a path from its cwd.
 * EMFILE, ENFILE: the limit on open files, and how to raise it. A file `hidden` names is "the file" there.
 */
function notStartedReason(request: ProcessRequest, code: string | undefined): string | undefined {
  if (code !== "ENOENT") return openFilesProblem(code);
  const problem = interpreterProblem(
    request.file,
    request.env.PATH ?? "/usr/bin:/bin",
    request.cwd,
    request.hidden !== undefined,
  );
  // Which file "the file" of a hidden one's problem is.
  return problem === undefined || request.hidden === undefined ? problem : `${request.hidden}: ${problem}`;
}

/**
 * The system's own words for a start that failed (`spawn <file> ENOENT`), with `file` named as `hidden` says
 * when a `${VAR}` gave it.
 */
function startError(
  request: ProcessRequest,
  code: string | undefined,
  message: string | undefined,
): string | undefined {
  if (request.hidden === undefined) return message ?? code;
  if (code !== undefined) return `spawn ${request.hidden} ${code}`;
  return message?.split(request.file).join(request.hidden);
}

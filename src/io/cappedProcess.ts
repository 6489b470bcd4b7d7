import type { Readable } from "node:stream";
import { startDescriptorsProblem } from "./openFiles.js";
import { PIPES_AFTER_EXIT_MS, signalGroup } from "./process.js";
import type { GroupNote } from "./processGroups.js";
import { wholeUtf8Length } from "./utf8Cut.js";

export interface CappedProcessRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is read and dropped. */
  readonly maxOutputBytes: number;
  readonly signal: AbortSignal;
  /** Notes the process group while it runs (a start after a SIGKILL stops what was left running). */
  readonly group?: GroupNote;
}

export interface CappedOutput {
  readonly text: string;
  /** Bytes dropped past the cap. */
  readonly dropped: number;
}

export interface CappedProcessResult {
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly timedOut: boolean;
  readonly canceled: boolean;
  /** Set when the program could not be started. */
  readonly startError: string | undefined;
  /** The system's code for why it could not be started (`ENOENT`, `E2BIG`), when it gave one. */
  readonly startCode?: string;
  readonly stdout: CappedOutput;
  readonly stderr: CappedOutput;
}

function collect(stream: Readable | null, max: number): () => CappedOutput {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  stream?.on("data", (chunk: Buffer) => {
    const room = max - kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    }
    dropped += Math.max(0, chunk.length - Math.max(room, 0));
  });
  return () => {
    const bytes = Buffer.concat(chunks);
    // A cut through a character drops the rest of it, counted with the bytes not shown.
    const whole = dropped > 0 ? wholeUtf8Length(bytes) : bytes.length;
    return { text: bytes.subarray(0, whole).toString("utf8"), dropped: dropped + bytes.length - whole };
  };
}

/**
 * Runs an argv (no shell of ours) in `cwd` with only `env`, no stdin, a timeout, and output kept up to a
 * cap: unlike `runProcess`, a chatty command is not a failure; its output is cut. The process leads its
 * own group, which is killed when it exits, times out or the run is canceled.
 */
export async function runCappedProcess(request: CappedProcessRequest): Promise<CappedProcessResult> {
  // Loaded at the first process: a command that starts none does not pay for the module.
  const { execa } = await import("execa");
  const short = startDescriptorsProblem();
  if (short !== undefined) {
    const none = { text: "", dropped: 0 };
    return {
      exitCode: undefined,
      signal: undefined,
      timedOut: false,
      canceled: false,
      startError: short,
      stdout: none,
      stderr: none,
    };
  }
  const subprocess = execa(request.file, [...request.args], {
    cwd: request.cwd,
    env: request.env,
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    timeout: request.timeoutMs,
    forceKillAfterDelay: 2000,
    reject: false,
    detached: true,
    cancelSignal: request.signal,
  });
  const pid = subprocess.pid;
  if (pid !== undefined) request.group?.started(pid);
  const stdout = collect(subprocess.stdout, request.maxOutputBytes);
  const stderr = collect(subprocess.stderr, request.maxOutputBytes);
  // A process the command moved out of its group (`setsid`, a daemon starting) outlives the group's kill and
  // can hold stdout or stderr open for as long as it runs: the call would wait for it, past the timeout.
  // Once the command has exited, what it wrote is read for a moment, then the pipes are closed.
  let closePipes: ReturnType<typeof setTimeout> | undefined;
  subprocess.once("exit", () => {
    signalGroup(subprocess.pid, "SIGKILL");
    closePipes = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, PIPES_AFTER_EXIT_MS);
  });
  const onCancel = () => signalGroup(subprocess.pid, "SIGTERM");
  request.signal.addEventListener("abort", onCancel, { once: true });
  const result = await subprocess.finally(() => {
    request.signal.removeEventListener("abort", onCancel);
    clearTimeout(closePipes);
    if (pid !== undefined) request.group?.ended(pid);
  });
  const notStarted = result.failed && result.exitCode === undefined && result.signal === undefined;
  const startCode = (result.cause as NodeJS.ErrnoException | undefined)?.code;
  return {
    ...(notStarted && typeof startCode === "string" ? { startCode } : {}),
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    canceled: result.isCanceled,
    startError: notStarted && !result.timedOut && !result.isCanceled ? result.shortMessage : undefined,
    stdout: stdout(),
    stderr: stderr(),
  };
}

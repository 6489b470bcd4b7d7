import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { CLI_MAIN, CLI_NODE_ARGS, svcModule } from "./cliEntry.js";

/** What cliRunner.mjs writes to stdout and stderr after each command, before its exit code. */
const DONE = "\u0000cliRunner:done:";

export interface OneProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr as they arrived, one chunk after another, as one pipe given to both would read. */
  readonly output: string;
}

/** A chunk of stdout or stderr, in the order they arrived. */
interface Chunk {
  readonly from: "stdout" | "stderr";
  readonly text: string;
}

interface Runner {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  /** What `stdout` and `stderr` hold, chunk by chunk in the order it arrived. */
  chunks: Chunk[];
  closed: boolean;
  code: number | null;
  /** Called as output arrives or the process ends, while a command runs. */
  wake?: (() => void) | undefined;
}

/**
 * Runs `svc` commands one after another in one process (cliRunner.mjs) started through `prefix` (setpriv as
 * another user, unshare into another PID namespace), instead of a process of its own each: the CLI's modules
 * load once. Each command runs as a user's `svc` runs it (src/cli/runCli.ts: the prologue, then the CommonJS
 * bundle for every command but `gateway run`) and still has its own environment, exit code, stdout and stderr.
 * A command that ends the process (`process.exit`, an uncaught exception) or is killed past its time ends it as
 * it would end its own; one that left something that would keep its own process alive (a timer, a socket, a
 * child, a watcher) did not exit: its code is `null`, as a killed process's, its stderr names what it left, and
 * it retires the process, as does one that left a process handler behind (a start that went on): the next
 * command starts a new process. One command at a time: `free` says when another must run in a process of its own.
 */
export class OneCliProcess {
  private runner: Runner | undefined;
  private busy = false;

  /**
   * Whether a command can run here now: none is running, and SVC_TEST_CLI is not `spawn` (every command
   * a process of its own, as in-process commands are then too).
   */
  get free(): boolean {
    return !this.busy && process.env.SVC_TEST_CLI !== "spawn";
  }

  constructor(
    private readonly prefix: readonly string[],
    /** Whether the test reads the commands' stdout (else it goes nowhere, as `stdio: "ignore"`). */
    private readonly withStdout = false,
  ) {}

  run(args: readonly string[], env: Record<string, string>, killAfterMs?: number): Promise<OneProcessResult> {
    if (this.busy) throw new Error("a command is already running in this process");
    this.busy = true;
    this.runner ??= this.start();
    const current = this.runner;
    current.child.send({ args, env }, () => {
      // A process that ended before it read the command is said by its close.
    });
    const guard =
      killAfterMs === undefined ? undefined : setTimeout(() => current.child.kill("SIGKILL"), killAfterMs);
    return new Promise((resolve) => {
      const settle = (result: OneProcessResult) => {
        clearTimeout(guard);
        current.wake = undefined;
        this.busy = false;
        resolve(result);
      };
      current.wake = () => {
        const err = ended(current.stderr);
        const out = this.withStdout ? ended(current.stdout) : { at: 0, next: 0 };
        if (err !== undefined && out !== undefined) {
          const [code, retire] = current.stderr.slice(err.at + DONE.length, err.next - 1).split(":");
          const result = {
            code: code === "null" ? null : Number(code),
            stdout: current.stdout.slice(0, out.at),
            stderr: current.stderr.slice(0, err.at),
            output: interleaved(current, { stdout: out, stderr: err }),
          };
          current.stdout = current.stdout.slice(out.next);
          current.stderr = current.stderr.slice(err.next);
          if (retire === "1" && this.runner === current) this.runner = undefined;
          settle(result);
        } else if (current.closed) {
          // Ended by the command (process.exit) or killed past its time: as a process of its own would end.
          const output = current.chunks.map((chunk) => chunk.text).join("");
          settle({ code: current.code, stdout: current.stdout, stderr: current.stderr, output });
          current.stdout = "";
          current.stderr = "";
          current.chunks = [];
        }
      };
    });
  }

  /** Ends the process (between commands). */
  stop(): Promise<void> {
    const stopping = this.runner;
    this.runner = undefined;
    if (stopping === undefined || stopping.closed) return Promise.resolve();
    return new Promise((resolve) => {
      stopping.child.once("close", () => resolve());
      stopping.child.kill("SIGKILL");
    });
  }

  private start(): Runner {
    const [command, ...rest] = [
      ...this.prefix,
      process.execPath,
      ...CLI_NODE_ARGS,
      join(import.meta.dirname, "cliRunner.mjs"),
      svcModule("cli/runCli.js"),
      CLI_MAIN,
    ];
    const child = spawn(command as string, rest, {
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", this.withStdout ? "pipe" : "ignore", "pipe", "ipc"],
    });
    const started: Runner = { child, stdout: "", stderr: "", chunks: [], closed: false, code: null };
    for (const from of ["stdout", "stderr"] as const)
      child[from]?.setEncoding("utf8").on("data", (text: string) => {
        started[from] += text;
        started.chunks.push({ from, text });
        started.wake?.();
      });
    child.on("close", (code) => {
      started.closed = true;
      started.code = code;
      if (this.runner === started) this.runner = undefined;
      started.wake?.();
    });
    return started;
  }
}

/**
 * The command's stdout and stderr in the order their chunks arrived, each up to its end's marker (`ends`);
 * the chunks past them, the next command's, are kept.
 */
function interleaved(runner: Runner, ends: Record<Chunk["from"], { at: number; next: number }>): string {
  let output = "";
  const read = { stdout: 0, stderr: 0 };
  const rest: Chunk[] = [];
  for (const chunk of runner.chunks) {
    const start = read[chunk.from];
    read[chunk.from] += chunk.text.length;
    const { at, next } = ends[chunk.from];
    output += chunk.text.slice(0, Math.max(0, at - start));
    const kept = chunk.text.slice(Math.max(0, next - start));
    if (kept !== "") rest.push({ from: chunk.from, text: kept });
  }
  runner.chunks = rest;
  return output;
}

/** Where the end of a command is said in `text`: the marker's start, and just past its line. */
function ended(text: string): { at: number; next: number } | undefined {
  const at = text.indexOf(DONE);
  const end = at === -1 ? -1 : text.indexOf("\n", at);
  return end === -1 ? undefined : { at, next: end + 1 };
}

import { Readable } from "node:stream";

/**
 * Runs one `svc` command line inside the test worker instead of a new node process (which costs a
 * node start and the CLI's module loading, ~0.3 s built and over 1 s through tsx, per command).
 *
 * The CLI reads `process.env` (and `process.stdin`, for answers), writes to `process.stdout`/`process.stderr`
 * and reports its outcome in `process.exitCode`, as a process does; for the length of the command these are
 * swapped for the test's environment, input and buffers, then restored. So one command at a time per worker: `svc()` in the CLI
 * helpers runs a command in-process only when none is running here already, and spawns the others, so
 * commands a test runs at the same time still run at the same time (in separate processes).
 */

export interface InProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let running = false;

/** Whether a command is running in-process now (another one must spawn). */
export function inProcessBusy(): boolean {
  return running;
}

type Write = typeof process.stdout.write;

/** Makes `stream` a pipe for the command's length: what it writes is collected, it is no terminal. */
function capture(stream: NodeJS.WriteStream, sink: (text: string) => void): () => void {
  const write = stream.write;
  const ownIsTTY = Object.getOwnPropertyDescriptor(stream, "isTTY");
  const ownColumns = Object.getOwnPropertyDescriptor(stream, "columns");
  stream.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(() => (done as () => void)());
    return true;
  }) as Write;
  Object.defineProperty(stream, "isTTY", { value: undefined, configurable: true, writable: true });
  Object.defineProperty(stream, "columns", { value: undefined, configurable: true, writable: true });
  return () => {
    stream.write = write;
    for (const [key, own] of [
      ["isTTY", ownIsTTY],
      ["columns", ownColumns],
    ] as const) {
      if (own === undefined) delete (stream as unknown as Record<string, unknown>)[key];
      else Object.defineProperty(stream, key, own);
    }
  };
}

/**
 * Loads the CLI's modules, with the command group `group` (`mcp`, `webhook`...), into this worker ahead of
 * the first command (in a file's `beforeAll`, with a timeout of its own): their first load in a worker
 * compiles them, which on a loaded machine can take most of a test's 30 s by itself.
 */
export async function loadInProcessCli(group?: string): Promise<void> {
  await import("../../src/cli/run.js");
  if (group === undefined) return;
  const { buildProgram } = await import("../../src/cli/program.js");
  await buildProgram([process.execPath, "svc", group]);
}

/** Makes `process.stdin` a pipe that gives `input` and ends, for the command's length. */
function feedStdin(input: string): () => void {
  const own = Object.getOwnPropertyDescriptor(process, "stdin");
  Object.defineProperty(process, "stdin", {
    value: Readable.from([input]),
    configurable: true,
    writable: true,
  });
  return () => {
    if (own === undefined) delete (process as { stdin?: unknown }).stdin;
    else Object.defineProperty(process, "stdin", own);
  };
}

/**
 * Runs `svc <args>` in this process with `env` as its whole environment; `cwd`: the working directory it
 * runs in (the worker's is changed for the command's length, as the pool runs files in processes of their own);
 * `input`: what the command reads on stdin, for one that asks questions there (`mcp install`).
 */
export async function runInProcess(
  args: readonly string[],
  env: Record<string, string>,
  cwd?: string,
  input?: string,
): Promise<InProcessResult> {
  if (running) throw new Error("an svc command is already running in this process");
  running = true;
  const { main } = await import("../../src/cli/run.js");
  let stdout = "";
  let stderr = "";
  const savedEnv = process.env;
  const savedExitCode = process.exitCode;
  const restoreOut = capture(process.stdout, (text) => (stdout += text));
  const restoreErr = capture(process.stderr, (text) => (stderr += text));
  const restoreStdin = input === undefined ? undefined : feedStdin(input);
  // A spawned command's stdin is a pipe: no terminal to prompt on, whatever the worker's stdin is.
  const stdinIsTTY = Object.getOwnPropertyDescriptor(process.stdin, "isTTY");
  Object.defineProperty(process.stdin, "isTTY", { value: undefined, configurable: true, writable: true });
  process.env = { ...env };
  process.exitCode = undefined;
  const savedCwd = process.cwd();
  let code: number | null;
  try {
    if (cwd !== undefined) process.chdir(cwd);
    await main([process.execPath, "svc", ...args]);
    code = Number(process.exitCode ?? 0);
  } finally {
    if (cwd !== undefined) process.chdir(savedCwd);
    process.env = savedEnv;
    process.exitCode = savedExitCode;
    restoreOut();
    restoreErr();
    if (stdinIsTTY === undefined) delete (process.stdin as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(process.stdin, "isTTY", stdinIsTTY);
    restoreStdin?.();
    running = false;
  }
  return { code, stdout, stderr };
}

/**
 * Runs the command lines one after another in this process with `env` (see `runInProcess`); their results
 * in order. For command lines refused or answered before any command runs (usage errors, help), whose
 * output needs no process of their own.
 */
export async function runEachInProcess<const T extends readonly (readonly string[])[]>(
  argsList: T,
  env: Record<string, string>,
): Promise<{ -readonly [K in keyof T]: InProcessResult }> {
  const results: InProcessResult[] = [];
  for (const args of argsList) results.push(await runInProcess(args, env));
  return results as { -readonly [K in keyof T]: InProcessResult };
}

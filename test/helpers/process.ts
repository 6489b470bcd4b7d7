import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/**
 * The pid itself, when a test may signal it: a whole number above 1. `kill(0, …)` signals the caller's
 * own process group — the test worker, vitest and the CI script that started them, which a pid file read
 * while still empty (`Number("")` is 0) once ended with SIGKILL — and `kill(-1, …)` every process there is.
 */
export function signallable(pid: number): number {
  if (!Number.isInteger(pid) || pid <= 1)
    throw new Error(
      `refusing to signal pid ${pid}: not a process of the test's own (read the pid file once it is whole)`,
    );
  return pid;
}

/**
 * Whether a process with this pid runs: it exists (signal 0 checks without sending anything) and is no
 * zombie. A process that ended after its parent did waits as a zombie for the container's init, which may
 * collect it late or never: it runs nothing and holds nothing but its pid.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(signallable(pid), 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
  return processState(pid) !== "Z";
}

/** Sends `signal` to the process `pid`; false when there is no such process. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(signallable(pid), signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** Sends `signal` to every process of the group `leader` leads; false when the group is gone. */
export function signalGroup(leader: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-signallable(leader), signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/**
 * The pid a process wrote in `file`, once it is there whole. A shell's `echo $$ > file` and Node's
 * `writeFileSync` create the file before they write the pid into it: read in between, it is empty.
 */
export async function pidInFile(file: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (/^\s*\d+\s*$/.test(text) && Number(text) > 1) return Number(text);
    if (Date.now() > deadline)
      throw new Error(`no pid in ${file} after ${timeoutMs} ms (it holds ${JSON.stringify(text)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts `command` under a parent that never collects its children (a shell that backgrounds it, then
 * execs `sleep`), so once the command exits it stays a zombie, as a SIGKILLed gateway does under a
 * container init that reaps nothing. Resolves with the parent (kill it to let the zombie go) and the
 * command's pid. The command must outlive the shell's `exec` (`sleep 0.1`, not `true`): a shell collects a
 * background job that ended before it.
 */
export async function spawnUnreaped(
  command: readonly string[],
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "" },
): Promise<{ parent: ChildProcess; pid: number }> {
  const parent = spawn("sh", ["-c", '"$@" & echo $!; exec sleep 60', "sh", ...command], { env });
  const pid = await new Promise<number>((resolve, reject) => {
    parent.once("error", reject);
    parent.stdout?.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  });
  return { parent, pid };
}

/** The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or undefined when there is no such process. */
export function processState(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
  } catch {
    return undefined;
  }
}

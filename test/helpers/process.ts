import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Whether a process with this pid runs: it exists (signal 0 checks without sending anything) and is no
 * zombie. A process that ended after its parent did waits as a zombie for the container's init, which may
 * collect it late or never: it runs nothing and holds nothing but its pid.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return processState(pid) !== "Z";
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

import { readFileSync } from "node:fs";

/** Whether a process with this pid exists (EPERM: it does, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether a process with this pid runs: it exists and is not a zombie (ended, its parent has not collected
 * it yet; a parent that never waits, or a container's init that reaps nothing, may leave it for long).
 */
export function processRunning(pid: number): boolean {
  return processAlive(pid) && processStat(pid)?.state !== "Z";
}

/** A process's state letter (`Z`: a zombie, ended) and start time (clock ticks since boot), from /proc. */
export function processStat(pid: number): { readonly state: string; readonly startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [state, startTime] = [fields[0], fields[19]];
    return state === undefined || startTime === undefined ? undefined : { state, startTime };
  } catch {
    return undefined;
  }
}

/** When the process started (/proc/<pid>/stat field 22): tells a reused pid apart. */
export function processStartTime(pid: number): string | undefined {
  return processStat(pid)?.startTime;
}

/** SIGCONT to a process that may be suspended; one that exited meanwhile is left alone. */
export function continueProcess(pid: number): void {
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // ESRCH: it exited after the signal before this one, which is what a stop waits for.
  }
}

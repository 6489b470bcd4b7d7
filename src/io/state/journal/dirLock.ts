import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { SvcError } from "../../../errors.js";
import { otherPidNamespace, pidNamespace } from "../../pidNamespace.js";
import { processAlive, processStat, processStartTime as startTimeOf } from "../../processAlive.js";
import {
  createLockFile,
  lockInTheWay,
  readLock,
  releaseLock,
  removeStaleLock,
} from "../../stores/fileLock.js";

/**
 * The lock file in the state directory: `<pid> <start time> <token> <pid namespace>` of the gateway that
 * holds it (no namespace: written by an older svc).
 */
export const LOCK_FILE = "LOCK";

/** Lock files this process holds, with their token (a second gateway in the same process is refused too). */
const heldHere = new Map<string, string>();

export class StateDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
    /** The holder's PID namespace, when it is not this process's. */
    namespace?: string,
  ) {
    super(
      namespace !== undefined
        ? `the state directory ${dir} is in use by a gateway of another PID namespace (pid ${pid} there, ${namespace}; this process runs in ${pidNamespace()}: a container and its host, or two containers, share this SVC_HOME) — whether it runs cannot be told from here: stop it where it runs, or use another SVC_HOME; if no gateway runs there any more, remove ${join(dir, LOCK_FILE)}`
        : pid === process.pid
          ? `the state directory ${dir} is already open in this process (another gateway started on the same SVC_HOME) — stop that one first`
          : `the state directory ${dir} is in use by another gateway (pid ${pid}) — stop it with ${stopCommand(dir, pid)}, or use another SVC_HOME`,
    );
    this.name = "StateDirBusyError";
  }
}

/**
 * How to stop the holder: `svc gateway stop` finds a gateway by its `gateway.pid` beside the state
 * directory; when that file does not name the holder (removed by hand, or not written yet by a gateway
 * still starting) it would say "not running", so the holder is named to `kill` (SIGTERM: the same graceful stop).
 */
function stopCommand(dir: string, pid: number): string {
  let named: number | undefined;
  try {
    named = Number(readFileSync(join(dirname(dir), "gateway.pid"), "utf8").trim());
  } catch {
    named = undefined;
  }
  return named === pid
    ? "svc gateway stop"
    : `kill ${pid} (${join(dirname(dir), "gateway.pid")} does not name it, so svc gateway stop would not find it)`;
}

/**
 * The gateway (`<pid> <start time>`) the state directory's lock names, held or left by a killed one;
 * undefined without a lock. Compared with an agent note's owner: that gateway ran with the local journal.
 */
export function lockHolder(dir: string): string | undefined {
  try {
    const [pid, start] = readFileSync(join(dir, LOCK_FILE), "utf8").trim().split(" ");
    return pid === undefined || start === undefined ? undefined : `${pid} ${start}`;
  } catch {
    return undefined;
  }
}

/** Whether the holder a lock file names still runs (the same process: its pid and its start time). */
function holderRuns(path: string, content: string): { runs: boolean; pid: number; namespace?: string } {
  const [pidText, start, token, namespace] = content.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return { runs: false, pid: 0 };
  // A pid of another PID namespace is another process here, or none: a gateway on the host and one
  // started in a container on the same SVC_HOME would otherwise both take the journal.
  if (otherPidNamespace(namespace)) return { runs: true, pid, namespace: namespace as string };
  if (pid === process.pid) return { runs: token !== undefined && heldHere.get(path) === token, pid };
  if (!processAlive(pid)) return { runs: false, pid };
  const stat = processStat(pid);
  // A zombie has ended (SIGKILL, a crash) and only waits for its parent to collect it, which a parent that
  // never waits (or a container's init that reaps nothing) may not do for a long while.
  if (stat?.state === "Z") return { runs: false, pid };
  const now = stat?.startTime;
  // A start time that differs is another process under a reused pid (a container's pid 1 after a restart).
  return { runs: start === undefined || start === "-" || now === undefined || now === start, pid };
}

export interface DirLock {
  release(): void;
  /**
   * Takes the lock again when its file no longer holds this lock (the state directory was removed or moved
   * while the gateway ran); throws `StateDirBusyError` when another gateway took the directory meanwhile.
   */
  retake(): void;
}

/**
 * Takes the state directory for this gateway: one journal, one writer. Two gateways replaying and
 * appending to the same journal would run every pending run twice and rotate segments under each other.
 * A lock left by a gateway that died (SIGKILL, power loss) is taken over: its pid no longer runs, or runs
 * as another process (a different start time).
 */
export function lockStateDir(dir: string): DirLock {
  const path = join(dir, LOCK_FILE);
  const token = randomUUID();
  const mine = `${process.pid} ${startTimeOf(process.pid) ?? "-"} ${token} ${pidNamespace() ?? "-"}\n`;
  takeLock(dir, path, mine);
  heldHere.set(path, token);
  return {
    release() {
      // A lock taken over after this one was left for dead is not this one's to remove.
      if (heldHere.get(path) === token) heldHere.delete(path);
      try {
        releaseLock(path, mine);
      } catch {
        // Not removable (SVC_HOME on a file system turned read-only): it names this process, gone by the next
        // start, which takes it over as a dead gateway's.
      }
    },
    retake() {
      if (readLock(path) !== mine) takeLock(dir, path, mine);
    },
  };
}

function takeLock(dir: string, path: string, mine: string): void {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createLockFile(path, mine)) return;
    // A directory there was read as a lock released meanwhile, five times over ("keeps changing").
    const stats = statSync(path, { throwIfNoEntry: false });
    const inTheWay =
      stats === undefined ? undefined : lockInTheWay(path, stats, "the state directory's lock");
    if (inTheWay !== undefined)
      throw new SvcError("startup_refused", `cannot lock the state directory ${dir}: ${inTheWay}`);
    const seen = readLock(path);
    if (seen === undefined) continue; // released meanwhile
    const holder = holderRuns(path, seen);
    if (holder.runs) throw new StateDirBusyError(dir, holder.pid, holder.namespace);
    // Stale; a fresh lock another starting gateway wrote in between stays, and this start is refused.
    const { replacedBy } = removeStaleLock(path, seen);
    if (replacedBy !== undefined) throw new StateDirBusyError(dir, Number(replacedBy.split(" ")[0]));
  }
  throw new Error(
    `cannot lock the state directory ${dir}: its ${LOCK_FILE} file keeps changing — is another gateway starting?`,
  );
}

import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { SvcError } from "../../../errors.js";
import { otherPidNamespace, pidNamespace } from "../../pidNamespace.js";
import { processAlive, processStat, processStartTime as startTimeOf } from "../../processAlive.js";
import {
  adoptSighting,
  createLockFile,
  FOREIGN_UNTOUCHED_MS,
  forgetSighting,
  HEARTBEAT_MS,
  heartbeat,
  lockInTheWay,
  readLock,
  releaseLock,
  removeStaleLock,
  touchedAgo,
  untouchedFor,
} from "../../stores/fileLock.js";

/**
 * The lock file in the state directory: `<pid> <start time> <token> <pid namespace>` of the gateway that
 * holds it (no namespace: written by an older svc). The gateway touches it every HEARTBEAT_MS for as long
 * as it holds it: a gateway of another PID namespace, whose pid cannot be checked here, is judged by that.
 */
export const LOCK_FILE = "LOCK";

/** Lock files this process holds, with their token (a second gateway in the same process is refused too). */
const heldHere = new Map<string, string>();

export class StateDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
    /**
     * The holder's PID namespace, when it is not this process's, and how long ago it last touched its lock
     * (ms, by this process's clock: said, not judged by).
     */
    foreign?: { readonly namespace: string; readonly touchedMs: number },
  ) {
    super(
      foreign !== undefined
        ? `the state directory ${dir} is in use by a gateway of another PID namespace (pid ${pid} there, ${foreign.namespace}; this process runs in ${pidNamespace()}: a container and its host, or two containers, share this SVC_HOME) — it touched ${join(dir, LOCK_FILE)} ${seconds(foreign.touchedMs)} ago by this process's clock, and this process has not seen it left untouched for ${FOREIGN_UNTOUCHED_MS / 1000} s (a running gateway touches it every ${HEARTBEAT_MS / 1000} s; one this process watched stay untouched that long is taken over as a killed gateway's): stop it where it runs, or use another SVC_HOME`
        : pid === process.pid
          ? `the state directory ${dir} is already open in this process (another gateway started on the same SVC_HOME) — stop that one first`
          : `the state directory ${dir} is in use by another gateway (pid ${pid}) — stop it with ${stopCommand(dir, pid)}, or use another SVC_HOME`,
    );
    this.name = "StateDirBusyError";
  }
}

/** `3.2 s`: how long ago a lock was touched, as a message says it. */
const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;

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

interface Holder {
  readonly runs: boolean;
  readonly pid: number;
  /** A holder of another PID namespace: which, and how long ago it last touched its lock (ms). */
  readonly foreign?: { readonly namespace: string; readonly touchedMs: number };
}

/**
 * Whether the holder a lock file names still runs (the same process: its pid and its start time). One of
 * another PID namespace runs while it touches its lock.
 */
function holderRuns(path: string, content: string): Holder {
  const [pidText, start, token, namespace] = content.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return { runs: false, pid: 0 };
  // A pid of another PID namespace is another process here, or none (a gateway on the host and one started
  // in a container on the same SVC_HOME): its holder touches the lock every HEARTBEAT_MS, and one this
  // process has watched stay untouched for FOREIGN_UNTOUCHED_MS of its monotonic clock (`untouchedFor`,
  // `awaitForeignLock` watches it first) was killed (a container stopped or restarted: its namespace is gone
  // with it), hangs or is paused. Its time is never compared with the system clock: a clock stepped by more
  // than that (NTP at boot, a VM resumed) would make a live gateway's lock look killed. Its time is read
  // after its text: a lock written anew in between is judged by its own.
  if (otherPidNamespace(namespace)) {
    const touched = touchedAgo(path);
    if (touched === undefined) return { runs: false, pid }; // released meanwhile
    return {
      runs: untouchedFor(path, content, touched.mtimeMs) < FOREIGN_UNTOUCHED_MS,
      pid,
      foreign: { namespace: namespace as string, touchedMs: touched.ms },
    };
  }
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

/**
 * The state directory's lock found naming another gateway while this one holds the directory: that gateway
 * took it over as a killed one's (this one was paused or hung past FOREIGN_UNTOUCHED_MS, or the file was
 * replaced by hand), and both now have one journal open. `by`: the text the lock holds now; undefined when
 * that gateway has released it since (it stopped while this one was paused), and `left`, the segment it
 * wrote, found in this one's place.
 */
export class StateDirTakenOver extends Error {
  constructor(
    readonly dir: string,
    readonly by: string | undefined,
    readonly left?: string,
  ) {
    super(
      by === undefined
        ? `${join(dir, LOCK_FILE)} was released by another gateway that took the state directory over (${left ?? "its segment"} is its)`
        : `${join(dir, LOCK_FILE)} now names another gateway (${by.trim()})`,
    );
    this.name = "StateDirTakenOver";
  }
}

/** What the lock's file holds now: this gateway's lock, none (removed), or another gateway's (`by`, its text). */
export type LockNow = "held" | "gone" | { readonly by: string };

export interface DirLock {
  release(): void;
  /**
   * Takes the lock again when its file no longer holds this lock (the state directory was removed or moved
   * while the gateway ran); throws `StateDirBusyError` when another gateway took the directory meanwhile.
   */
  retake(): void;
  /**
   * Reads the lock's file now (the heartbeat reads it every HEARTBEAT_MS only): a journal that finds its
   * segment gone looks first whether another gateway took the directory over, before it makes it again.
   */
  now(): LockNow;
}

/**
 * Takes the state directory for this gateway: one journal, one writer. Two gateways replaying and
 * appending to the same journal would run every pending run twice and rotate segments under each other.
 * A lock left by a gateway that died (SIGKILL, power loss) is taken over: its pid no longer runs, or runs
 * as another process (a different start time); one of another PID namespace, once left untouched for
 * FOREIGN_UNTOUCHED_MS of this process's monotonic clock (`awaitForeignLock` watches it first). The lock
 * is touched every HEARTBEAT_MS until it is released (a timer that keeps no process alive); a beat that
 * finds it naming another gateway calls `takenOver`, once.
 */
export function lockStateDir(dir: string, takenOver?: (err: StateDirTakenOver) => void): DirLock {
  const path = join(dir, LOCK_FILE);
  const token = randomUUID();
  const mine = `${process.pid} ${startTimeOf(process.pid) ?? "-"} ${token} ${pidNamespace() ?? "-"}\n`;
  takeLock(dir, path, mine);
  heldHere.set(path, token);
  // Touched only while it holds this text: a lock taken over, or retaken, is left to its own holder's beat;
  // one found naming another gateway is said once (`takenOver`).
  const stopBeat = heartbeat(path, mine, {
    replaced: (by) => takenOver?.(new StateDirTakenOver(dir, by)),
  });
  return {
    release() {
      stopBeat();
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
    now() {
      const text = readLock(path);
      return text === mine ? "held" : text === undefined ? "gone" : { by: text };
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
    if (holder.runs) throw new StateDirBusyError(dir, holder.pid, holder.foreign);
    // Stale; a fresh lock another starting gateway wrote in between stays, and this start is refused.
    if (holder.foreign !== undefined) forgetSighting(path);
    const { replacedBy } = removeStaleLock(path, seen);
    if (replacedBy !== undefined) throw new StateDirBusyError(dir, Number(replacedBy.split(" ")[0]));
  }
  throw new Error(
    `cannot lock the state directory ${dir}: its ${LOCK_FILE} file keeps changing — is another gateway starting?`,
  );
}

/** A lock of another PID namespace this process has not yet watched stay untouched for FOREIGN_UNTOUCHED_MS. */
interface WatchedForeignLock {
  readonly text: string;
  readonly pid: number;
  readonly namespace: string;
  /** How long this process has seen it untouched (ms of its monotonic clock, `untouchedFor`). */
  readonly untouchedMs: number;
  readonly mtimeMs: number;
}

function watchedForeignLock(path: string): WatchedForeignLock | undefined {
  const text = readLock(path);
  if (text === undefined) return undefined;
  const [pidText, , , namespace] = text.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !otherPidNamespace(namespace)) return undefined;
  const touched = touchedAgo(path);
  if (touched === undefined) return undefined;
  const untouchedMs = untouchedFor(path, text, touched.mtimeMs);
  if (untouchedMs >= FOREIGN_UNTOUCHED_MS) return undefined;
  return { text, pid, namespace: namespace as string, untouchedMs, mtimeMs: touched.mtimeMs };
}

/** The state directory's lock of another PID namespace as a process saw it, watched untouched for `untouchedMs`. */
export interface ForeignLockSeen {
  readonly file: string;
  readonly text: string;
  readonly mtimeMs: number;
  readonly untouchedMs: number;
}

/**
 * Looks at the state directory's lock and, when it names a gateway of another PID namespace, watches it
 * (`untouchedFor`) from this look on: called while gateway.pid is watched (`elsewhereStart`), so the
 * gateway's own wait (`awaitForeignLock`, `lockStateDir`) counts that time, and a lock left untouched
 * meanwhile is taken over at once rather than watched FOREIGN_UNTOUCHED_MS more. Undefined when none.
 */
export function watchForeignLock(dir: string): ForeignLockSeen | undefined {
  const path = join(dir, LOCK_FILE);
  const text = readLock(path);
  if (text === undefined || !otherPidNamespace(text.trim().split(" ")[3])) return undefined;
  const touched = touchedAgo(path);
  if (touched === undefined) return undefined;
  const untouchedMs = untouchedFor(path, text, touched.mtimeMs);
  return { file: path, text, mtimeMs: touched.mtimeMs, untouchedMs };
}

/** What `watchForeignLock` saw in another process (`svc gateway start`, for the gateway it spawns), counted here. */
export function adoptForeignLockWatch(seen: ForeignLockSeen): void {
  adoptSighting(seen.file, seen.text, seen.mtimeMs, seen.untouchedMs);
}

/** How often a wait for a lock of another PID namespace looks whether it was touched (ms). */
const LOOK_MS = 1000;

/**
 * Before `lockStateDir`: a lock of another PID namespace is watched until this process has seen it stay
 * untouched (its text and modification time unchanged) for FOREIGN_UNTOUCHED_MS of its monotonic clock,
 * saying so once (`info`); a lock first seen here is watched that whole time, however long ago its time
 * says it was touched, as that time is of a clock that may have been stepped (NTP at boot, a VM resumed)
 * or be another's. A container restarted after its gateway was killed (SIGKILL, an OOM kill) starts within
 * seconds, in a new namespace, and finds its killed gateway's lock: left untouched, it is then taken over.
 * One touched meanwhile (a live gateway of another namespace sharing this SVC_HOME) ends the wait within
 * LOOK_MS, and `lockStateDir` refuses it. The wait is at most FOREIGN_UNTOUCHED_MS for each lock seen;
 * `sleep` rejects when `signal` is aborted (a stop signal during the start).
 */
export async function awaitForeignLock(
  dir: string,
  options: {
    readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
    readonly info: (line: string) => void;
    readonly signal?: AbortSignal;
  },
): Promise<void> {
  const path = join(dir, LOCK_FILE);
  let waited: WatchedForeignLock | undefined;
  let slept = 0;
  for (;;) {
    const seen = watchedForeignLock(path);
    if (seen === undefined) return; // none, or watched untouched long enough: lockStateDir judges it
    if (waited?.text === seen.text) {
      // Touched since: its gateway runs. Slept longer than the bound on a clock that did not move this
      // process's monotonic one (a test's): lockStateDir judges it as it stands.
      if (seen.mtimeMs !== waited.mtimeMs || slept > 2 * FOREIGN_UNTOUCHED_MS) return;
    } else {
      slept = 0;
      options.info(
        `[state] ${path} names a gateway of another PID namespace (pid ${seen.pid} there, ${seen.namespace}; this process runs in ${pidNamespace()}): waiting up to ${Math.ceil((FOREIGN_UNTOUCHED_MS - seen.untouchedMs) / 1000)} s for it to stay untouched for ${FOREIGN_UNTOUCHED_MS / 1000} s while this start watches it, as a killed gateway's does (a container restarted after a SIGKILL or an OOM kill), to take it over — a running gateway touches it every ${HEARTBEAT_MS / 1000} s, and this start is then refused`,
      );
    }
    waited = seen;
    const step = Math.min(LOOK_MS, FOREIGN_UNTOUCHED_MS - seen.untouchedMs + 50);
    await options.sleep(step, options.signal);
    slept += step;
  }
}

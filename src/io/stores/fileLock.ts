import { randomBytes } from "node:crypto";
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { basename, dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SvcError } from "../../errors.js";
import { makeStoreDirs, refusingDir } from "../makeDirs.js";
import { otherPidNamespace, pidNamespace, pidNamespaceTag } from "../pidNamespace.js";
import { processRunning, processStartTime } from "../processAlive.js";
import { NotRegularFile, otherKind } from "../regularFile.js";
import { resolveLink, unwritableStore } from "./atomicFile.js";
import { directoryInPlaceFix } from "./unreadableStoreFix.js";

export interface LockOptions {
  /**
   * Give up after this long (ms); past it while a lock of another PID namespace is watched untouched, and
   * counted anew once that lock is taken over or replaced (see `lockWaitTimeout`).
   */
  readonly timeoutMs?: number;
  /**
   * A lock untouched for this long is taken over (ms), whether or not its owner runs; one whose owner is
   * gone is taken over sooner, and so is one of another PID namespace (whose owner cannot be checked here),
   * once untouched for FOREIGN_UNTOUCHED_MS.
   */
  readonly staleMs?: number;
}

/**
 * How often `withFileLock`'s holder touches its lock file (its modification time) while it holds it: a
 * holder of another PID namespace cannot be checked by its pid, so its lock is judged by when it was last
 * touched. (`withFileLockSync` blocks its thread for the short edits it serves, and touches it only when
 * taking it.)
 */
export const HEARTBEAT_MS = 5_000;

/**
 * A lock of another PID namespace seen untouched for this long (three heartbeats missed; timed on the
 * waiter's monotonic clock, see `untouchedFor`) is taken over: its holder was killed (a container stopped
 * or restarted while it held it, whose namespace no longer exists), is hung, or is paused (`docker pause`,
 * SIGSTOP), which cannot be told from here. One touched meanwhile is waited for, however long it is held
 * (a token refresh).
 */
export const FOREIGN_UNTOUCHED_MS = 3 * HEARTBEAT_MS;

/** Per lock path, the foreign lock last seen there: its text, its modification time, and since when (monotonic). */
const sightings = new Map<string, { text: string; mtimeMs: number; since: number }>();

/**
 * How long (ms of this process's monotonic clock, `performance.now`) the lock at `lockPath` holding `text`
 * has kept the modification time `mtimeMs` while this process looked at it: 0 at its first sight, and again
 * whenever its time (its holder touched it) or its text (another holder) changed since the last look. Its
 * time is never compared with the system clock, so a step of either clock (NTP, a resume from suspend, a
 * container's own clock) neither ages a lock its holder touches nor keeps one nobody touches, and a lock
 * first seen long after it was last touched is still watched for the whole bound before it is judged
 * untouched. One record per lock path; `forgetSighting` drops it.
 */
export function untouchedFor(lockPath: string, text: string, mtimeMs: number): number {
  const now = performance.now();
  const seen = sightings.get(lockPath);
  if (seen === undefined || seen.text !== text || seen.mtimeMs !== mtimeMs) {
    sightings.set(lockPath, { text, mtimeMs, since: now });
    return 0;
  }
  return now - seen.since;
}

/**
 * What another process (`svc gateway start`, which spawns the gateway) saw of the lock at `lockPath`: its
 * `text` and `mtimeMs`, watched untouched for `watchedMs`. `untouchedFor` counts from then on as though this
 * process had watched it that long; a lock that changed since (its text or time) is watched anew.
 */
export function adoptSighting(lockPath: string, text: string, mtimeMs: number, watchedMs: number): void {
  const seen = sightings.get(lockPath);
  if (seen !== undefined && seen.text === text && seen.mtimeMs === mtimeMs) return;
  sightings.set(lockPath, { text, mtimeMs, since: performance.now() - Math.max(0, watchedMs) });
}

/** Drops what `untouchedFor` remembers of the lock at `lockPath` (taken over, or released). */
export function forgetSighting(lockPath: string): void {
  sightings.delete(lockPath);
}

/**
 * The timeout of one wait for `lockPath` (`started`: when the wait began, monotonic), asked after each failed
 * attempt: whether it gives up now. It runs out `timeoutMs` after `started`, except while the lock it first
 * saw is one of another PID namespace left untouched since that look, which is taken over once `untouchedFor`
 * reaches FOREIGN_UNTOUCHED_MS (a timeout shorter than that, a store's 10 s, would otherwise give up on a lock
 * left by a killed container at every first sight). Once that lock is taken over or replaced (by this
 * process's other writers or another process's, waiting for it too: one of them takes it over, and the rest
 * wait their turn), its `timeoutMs` count anew from then: counted from `started`, they had run out during
 * the wait for the dead lock, and every writer but the one that took it over gave up at once. One touched
 * during the wait (a live holder) times out as before.
 */
function lockWaitTimeout(lockPath: string, timeoutMs: number, started: number): () => boolean {
  const firstLook = performance.now();
  let deadline = started + timeoutMs;
  // The text of the foreign lock this wait watches, untouched since its first look.
  let watched = untouchedSince(lockPath, readLock(lockPath), firstLook);
  return () => {
    if (watched !== undefined) {
      const now = readLock(lockPath);
      if (now !== watched) deadline = performance.now() + timeoutMs;
      else if (untouchedSince(lockPath, now, firstLook) !== undefined) return false;
      watched = undefined;
    }
    return performance.now() > deadline;
  };
}

/** `text` when it is the lock of another PID namespace at `lockPath` seen untouched since `firstLook`. */
function untouchedSince(lockPath: string, text: string | undefined, firstLook: number): string | undefined {
  const seen = sightings.get(lockPath);
  return text !== undefined && seen !== undefined && seen.text === text && seen.since <= firstLook
    ? text
    : undefined;
}

/**
 * The lock file's text: `<pid> <start time> <random> <pid namespace>` (the start time and the namespace `-`
 * where /proc has none); the random part tells one holder's lock from the next one's, and the namespace
 * whether its pid can be checked here (an older svc wrote no namespace).
 */
export function readLock(lockPath: string): string | undefined {
  try {
    return readFileSync(lockPath, "utf8");
  } catch {
    return undefined;
  }
}

/** `<pid>.ns<namespace>` (`<pid>` where the namespace is unknown): a lock's own files are named with it. */
function ownFileTag(): string {
  const tag = pidNamespaceTag();
  return tag === undefined ? String(process.pid) : `${process.pid}.${tag}`;
}

/** The texts of the locks this process holds now. */
const heldHere = new Set<string>();
let ownStart: string | undefined;
/** This process's start time as lock texts carry it (read once). */
const ownStartTime = () => (ownStart ??= processStartTime(process.pid) ?? "-");

/**
 * Whether the lock's owner still runs: a zombie (killed, not yet collected by its parent) does not, nor
 * does a process that got the owner's pid after it died (a container's pid 1 after a restart): its start
 * time differs, and a lock naming this very process that it does not hold was left by the one before.
 * `elsewhere`: an owner of another PID namespace (a CLI command in a container sharing SVC_HOME with the
 * host, or the other way round), whose pid names another process here, or none: it cannot be told.
 */
function ownerState(text: string): "runs" | "gone" | "elsewhere" {
  const [pidText, start, random, namespace] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return "gone";
  if (otherPidNamespace(namespace)) return "elsewhere";
  if (pid === process.pid) return heldHere.has(text) ? "runs" : "gone";
  if (!processRunning(pid)) return "gone";
  // `<pid> <random>` (an older svc) names no start time.
  if (random === undefined || start === "-") return "runs";
  const now = processStartTime(pid);
  return now === undefined || now === start ? "runs" : "gone";
}

/**
 * Creates the lock file (0600) holding `text`; false when it already exists. The text is written to a file
 * of its own first and linked into place, so the lock appears whole: created empty and written after, it
 * was empty for a moment, and another process reading it then found no holder in it and removed it as a
 * dead one's (two gateways on one state directory, two `svc gateway start` both claiming gateway.pid).
 * Where the file system has no hard links, it is created in place as before.
 */
export function createLockFile(lockPath: string, text: string): boolean {
  const whole = `${lockPath}.${ownFileTag()}.${randomBytes(4).toString("hex")}.new`;
  writeExclusive(whole, text);
  try {
    linkSync(whole, lockPath);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP") return createInPlace(lockPath, text);
    throw err;
  } finally {
    rmSync(whole, { force: true });
  }
}

/** Creates `path` holding `text`; a write that fails (a full disk) leaves no empty file behind. */
function writeExclusive(path: string, text: string): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, text);
  } catch (err) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw err;
  }
  closeSync(fd);
}

function createInPlace(lockPath: string, text: string): boolean {
  try {
    writeExclusive(lockPath, text);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  }
}

/**
 * Creates the lock file of `path`; its text when it is ours, undefined when another process holds it. A
 * disk with no room for the lock's few bytes has none for the store either, and a directory that takes no
 * lock takes no new store: either is said naming the store.
 */
function tryAcquire(path: string, lockPath: string, staleMs: number): string | undefined {
  const text = `${process.pid} ${ownStartTime()} ${randomBytes(8).toString("hex")} ${pidNamespace() ?? "-"}`;
  const create = () => {
    try {
      return createLockFile(lockPath, text);
    } catch (err) {
      throw unwritableStore(path, err, dirname(lockPath));
    }
  };
  // A stale lock removed is taken at once: a wait whose time ran out meanwhile would give up on it.
  if (create() || (takeOverIfStale(path, lockPath, staleMs) && create())) {
    heldHere.add(text);
    return text;
  }
  return undefined;
}

/**
 * Removes the lock judged stale, and only that one: it is renamed aside and its text compared, so a
 * process that judged an old lock cannot delete the fresh one another process created meanwhile (that
 * one is put back). The text of the lock found instead, when it was not the judged one. Throws when the
 * lock cannot be moved for another reason than being gone (EROFS, EACCES).
 */
export function removeStaleLock(lockPath: string, judged: string): { replacedBy?: string } {
  const aside = `${lockPath}.${ownFileTag()}.${randomBytes(4).toString("hex")}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    // Gone: someone else took it over first. Anything else (a read-only file system, no write access to
    // the directory) would fail the same way at every attempt: the caller reports it.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw err;
  }
  const moved = readLock(aside);
  try {
    if (moved !== judged) linkSync(aside, lockPath);
  } catch {
    // A third process already holds a new lock: leave it.
  } finally {
    rmSync(aside, { force: true });
  }
  return moved === judged || moved === undefined ? {} : { replacedBy: moved };
}

/**
 * What stands at `lockPath` when it is no file (a directory: a `mkdir -p` of the wrong path, a restore that
 * made one; a named pipe, whose read would wait for a writer): no svc process holds it, so none will
 * release it, and waiting for it is useless. The lock named and what to do; undefined for a file.
 * `kept`: what svc keeps in that file.
 */
export function lockInTheWay(lockPath: string, stats: Stats, kept: string): string | undefined {
  if (stats.isFile()) return undefined;
  const kind = otherKind(stats);
  return kind === undefined
    ? `${lockPath}: ${directoryInPlaceFix(kept)}`
    : `${lockPath}: ${new NotRegularFile(lockPath, kind).message} — move it away (svc keeps ${kept} in a file of that name)`;
}

/**
 * Removes a stale lock (its owner gone, or held past `staleMs`) so the next attempt can take it; refuses a
 * lock that is no file at once. Whether the lock is gone (removed, or released meanwhile).
 */
function takeOverIfStale(path: string, lockPath: string, staleMs: number): boolean {
  let stats: Stats;
  try {
    stats = statSync(lockPath);
  } catch {
    return true; // released between our attempts
  }
  const inTheWay = lockInTheWay(lockPath, stats, `the lock of ${basename(path)}`);
  if (inTheWay !== undefined) throw new SvcError("store_unwritable", inTheWay);
  const age = Date.now() - stats.mtimeMs;
  const judged = readLock(lockPath);
  if (judged === undefined) return true;
  // A dead owner's lock is taken over once it is a second old either way: one with a time ahead of the
  // clock (set back since its owner died) would otherwise never be. One of another PID namespace is judged
  // by how long this process has seen it untouched (its holder touches it every HEARTBEAT_MS while it holds
  // it, a tokens lock's, held through a refresh, included), on the monotonic clock: its time against the
  // system clock says nothing once either clock was stepped.
  const owner = ownerState(judged);
  const stale =
    owner === "elsewhere"
      ? untouchedFor(lockPath, judged, stats.mtimeMs) >= Math.min(staleMs, FOREIGN_UNTOUCHED_MS)
      : (owner === "gone" && Math.abs(age) > Math.min(staleMs, 1000)) || age > staleMs;
  if (!stale) return false;
  if (owner === "elsewhere") forgetSighting(lockPath);
  removeStaleLock(lockPath, judged);
  return true;
}

/** Removes the lock only if it is still the one this process created (not one taken over meanwhile). */
export function releaseLock(lockPath: string, text: string): void {
  heldHere.delete(text);
  if (readLock(lockPath) === text) rmSync(lockPath, { force: true });
}

function lockTimeout(lockPath: string): SvcError {
  const [pid, , , namespace] = (readLock(lockPath) ?? "").trim().split(/\s+/);
  return new SvcError(
    "lock_timeout",
    otherPidNamespace(namespace)
      ? `${lockPath}: another svc process holds this lock (pid ${pid} of another PID namespace, ${namespace}; this process runs in ${pidNamespace()}: a container and its host, or two containers, share this SVC_HOME, or a container was stopped or restarted while it held the lock) — whether it runs cannot be told from here: a holder touches the lock every ${HEARTBEAT_MS / 1000} s, and one untouched for ${FOREIGN_UNTOUCHED_MS / 1000} s is taken over: try again`
      : `${lockPath}: another svc process holds this lock — try again, or remove the file if no svc is running`,
  );
}

/**
 * How long ago the file at `path` was last touched (ms; negative when it is dated ahead of the clock), with
 * its modification time; undefined when it is gone.
 */
export function touchedAgo(path: string): { readonly ms: number; readonly mtimeMs: number } | undefined {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats === undefined ? undefined : { ms: Date.now() - stats.mtimeMs, mtimeMs: stats.mtimeMs };
}

/** What `heartbeat` is told besides the file and its text. */
export interface HeartbeatOptions {
  /**
   * Called once, at the first beat that finds the file holding another text (another process took it over,
   * judging this one killed: it was paused or hung past FOREIGN_UNTOUCHED_MS).
   */
  readonly replaced?: (by: string) => void;
  /**
   * Asked at each beat that finds the file holding `text`: whether it is still this process's. A text alone
   * may not tell (gateway.pid holds a bare pid, which a gateway of another PID namespace may share): one that
   * is not is left untouched, as one holding another text is.
   */
  readonly holds?: () => boolean;
}

/**
 * Touches the held lock every HEARTBEAT_MS (a timer that keeps no process alive) until the returned stop
 * is called: a waiter of another PID namespace takes it over only once it is left untouched. Also the
 * gateway's own files that say it runs (the state directory's LOCK, gateway.pid), while they are its own.
 */
export function heartbeat(lockPath: string, text: string, options: HeartbeatOptions = {}): () => void {
  let told = false;
  const timer = setInterval(() => {
    const now = readLock(lockPath);
    if (now !== text) {
      // Taken over meanwhile: not ours to touch. Gone (removed with its directory) is its owner's to retake.
      if (now !== undefined && !told && options.replaced !== undefined) {
        told = true;
        options.replaced(now);
      }
      return;
    }
    if (options.holds !== undefined && !options.holds()) return;
    try {
      const at = new Date();
      utimesSync(lockPath, at, at);
    } catch {
      // Gone, or a file system that refuses it: the next beat tries again.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The store's directory (a first cron job's `cron/`); a disk with no room for it is said naming the store. */
function makeLockDir(path: string, lockPath: string): void {
  try {
    makeStoreDirs(dirname(lockPath));
  } catch (err) {
    throw unwritableStore(path, err, refusingDir(err, dirname(lockPath)));
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * `withFileLock` for synchronous read-modify-write edits (config.yaml, .env) made by CLI commands:
 * waits by blocking the thread, so only use it where nothing else runs on the event loop.
 */
export function withFileLockSync<T>(linkOrPath: string, fn: () => T, options: LockOptions = {}): T {
  const path = resolveLink(linkOrPath);
  const lockPath = `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  makeLockDir(path, lockPath);
  // The wait is timed on the clock that is never set: one set back (NTP) would stretch it by the step.
  const started = performance.now();
  let wait = 5;
  let held = tryAcquire(path, lockPath, options.staleMs ?? 30_000);
  if (held === undefined) {
    const timedOut = lockWaitTimeout(lockPath, timeoutMs, started);
    do {
      if (timedOut()) throw lockTimeout(lockPath);
      Atomics.wait(sleeper, 0, 0, wait);
      wait = Math.min(wait * 2, 100);
      held = tryAcquire(path, lockPath, options.staleMs ?? 30_000);
    } while (held === undefined);
  }
  try {
    return fn();
  } finally {
    releaseLock(lockPath, held);
  }
}

/**
 * Runs `fn` while holding `<path>.lock`, an exclusive lock shared by every process on this machine. It is
 * beside the file a write replaces, a symbolic link's target (as `writeFileAtomic` resolves it): locked at
 * the link's own path, two links to one file (two homes sharing a store from a dotfiles checkout) would be
 * two locks, and their writers would overwrite each other's records.
 */
export async function withFileLock<T>(
  linkOrPath: string,
  fn: () => T | Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const path = resolveLink(linkOrPath);
  const lockPath = `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  makeLockDir(path, lockPath);
  const started = performance.now();
  let wait = 5;
  let held = tryAcquire(path, lockPath, staleMs);
  if (held === undefined) {
    const timedOut = lockWaitTimeout(lockPath, timeoutMs, started);
    do {
      if (timedOut()) throw lockTimeout(lockPath);
      await sleep(wait);
      wait = Math.min(wait * 2, 100);
      held = tryAcquire(path, lockPath, staleMs);
    } while (held === undefined);
  }
  const stop = heartbeat(lockPath, held);
  try {
    return await fn();
  } finally {
    stop();
    releaseLock(lockPath, held);
  }
}

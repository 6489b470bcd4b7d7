import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SvcError } from "../../errors.js";

export interface LockOptions {
  /** Give up after this long (ms). */
  readonly timeoutMs?: number;
  /** A lock older than this whose owner is gone is taken over (ms). */
  readonly staleMs?: number;
}

function ownerAlive(lockPath: string): boolean {
  try {
    const pid = Number(readFileSync(lockPath, "utf8").trim());
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function tryAcquire(lockPath: string, staleMs: number): boolean {
  try {
    const fd = openSync(lockPath, "wx", 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  try {
    const age = Date.now() - statSync(lockPath).mtimeMs;
    if (!ownerAlive(lockPath) && age > Math.min(staleMs, 1000)) rmSync(lockPath, { force: true });
    else if (age > staleMs) rmSync(lockPath, { force: true });
  } catch {
    // The holder released it between our attempts; try again.
  }
  return false;
}

function lockTimeout(lockPath: string): SvcError {
  return new SvcError(
    "lock_timeout",
    `${lockPath}: another svc process holds this lock — try again, or remove the file if no svc is running`,
  );
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * `withFileLock` for synchronous read-modify-write edits (config.yaml, .env) made by CLI commands:
 * waits by blocking the thread, so only use it where nothing else runs on the event loop.
 */
export function withFileLockSync<T>(path: string, fn: () => T, options: LockOptions = {}): T {
  const lockPath = `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 });
  const started = Date.now();
  let wait = 5;
  while (!tryAcquire(lockPath, options.staleMs ?? 30_000)) {
    if (Date.now() - started > timeoutMs) throw lockTimeout(lockPath);
    Atomics.wait(sleeper, 0, 0, wait);
    wait = Math.min(wait * 2, 100);
  }
  try {
    return fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

/** Runs `fn` while holding `<path>.lock`, an exclusive lock shared by every process on this machine. */
export async function withFileLock<T>(
  path: string,
  fn: () => T | Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lockPath = `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 });
  const started = Date.now();
  let wait = 5;
  while (!tryAcquire(lockPath, staleMs)) {
    if (Date.now() - started > timeoutMs) {
      throw new SvcError(
        "lock_timeout",
        `${lockPath}: another svc process holds this lock — try again, or remove the file if no svc is running`,
      );
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 100);
  }
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

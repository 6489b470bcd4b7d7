import { accessSync, constants, mkdirSync } from "node:fs";
import { describeError, SvcError } from "../errors.js";

/** What the refusal says: SVC_HOME, why, and the two ways out. */
export function homeNotWritable(home: string, err: unknown): SvcError {
  return new SvcError(
    "startup_refused",
    `${home}: SVC_HOME cannot be written (${describeError(err)}) — the gateway keeps its pid file, logs, journal and stores there: fix its owner or permissions (or free disk space), or set SVC_HOME to a directory this user can write`,
  );
}

/**
 * The gateway writes gateway.pid, logs and stores in SVC_HOME: one it cannot write (read-only, another
 * user's) refuses the start before anything listens, instead of a bare EACCES once requests were taken.
 */
export function assertHomeWritable(home: string): void {
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    accessSync(home, constants.W_OK);
  } catch (err) {
    throw homeNotWritable(home, err);
  }
}

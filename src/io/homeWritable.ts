import { accessSync, constants, mkdirSync, readlinkSync, statSync } from "node:fs";
import { describeError, SvcError } from "../errors.js";

/** What the refusal says: SVC_HOME, why, and the two ways out. */
export function homeNotWritable(home: string, err: unknown): SvcError {
  return new SvcError(
    "startup_refused",
    `${home}: SVC_HOME cannot be written (${describeError(err)}) — the gateway keeps its pid file, logs, journal and stores there: fix its owner or permissions (or free disk space), or set SVC_HOME to a directory this user can write`,
  );
}

/**
 * Why SVC_HOME cannot be the gateway's data directory as it stands, without creating anything: a file in
 * its place, a symbolic link to nothing (a dotfiles checkout moved away), a directory this user cannot
 * write. Undefined when it can be used, or is missing and will be made.
 */
export function homeProblem(home: string): string | undefined {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(home).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") return homeNotWritable(home, err).message;
    let target: string;
    try {
      target = readlinkSync(home);
    } catch {
      return undefined; // missing: the gateway makes it
    }
    return `${home}: SVC_HOME is a symbolic link to ${target}, which does not exist — create that directory, or set SVC_HOME to another one`;
  }
  if (!isDirectory)
    return `${home}: SVC_HOME is not a directory — move that file away (the gateway makes the directory), or set SVC_HOME to a directory`;
  try {
    accessSync(home, constants.W_OK);
  } catch (err) {
    return homeNotWritable(home, err).message;
  }
  return undefined;
}

/**
 * The gateway writes gateway.pid, logs and stores in SVC_HOME: one it cannot write (read-only, another
 * user's) refuses the start before anything listens, instead of a bare EACCES once requests were taken.
 */
export function assertHomeWritable(home: string): void {
  const problem = homeProblem(home);
  if (problem !== undefined) throw new SvcError("startup_refused", problem);
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    accessSync(home, constants.W_OK);
  } catch (err) {
    throw homeNotWritable(home, err);
  }
}

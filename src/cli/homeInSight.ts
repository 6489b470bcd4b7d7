import { accessSync, constants, statSync } from "node:fs";
import { SvcError } from "../errors.js";
import { closedDirectory, closedFix } from "../io/closedDir.js";
import { homeProblem } from "../io/homeWritable.js";
import { thisUser } from "../io/userName.js";

/** Whether a refusal's code is one of looking (EACCES, or EPERM of a security module). */
function refused(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM";
}

/** Whether looking for `path` is refused (EACCES): whether it is there is unknown. */
function outOfSight(path: string): boolean {
  try {
    statSync(path, { throwIfNoEntry: false });
    return false;
  } catch (err) {
    return refused(err);
  }
}

/**
 * Whether SVC_HOME (`home`) is itself what keeps this user from looking: a directory on the way to it closed (it
 * cannot be reached), or the home closed to looking into. A home this user may look into but not write (root's,
 * mode 0755) is not: a command that only reads has no need to write there.
 */
function homeOutOfSight(home: string): boolean {
  try {
    statSync(home);
  } catch (err) {
    return refused(err);
  }
  try {
    accessSync(home, constants.X_OK);
    return false;
  } catch (err) {
    return refused(err);
  }
}

/**
 * Throws SVC_HOME's (`home`'s) problem alone when this user may not look for `path` in it because of SVC_HOME
 * itself (a directory on the way to it, or SVC_HOME, closed to this user: EACCES): whether the file is there is
 * unknown, so it is not said missing (no login saved, no gateway running, a history file's mode). A file that is
 * simply not there, or one refused below an SVC_HOME this user may look into, is left to the caller.
 */
export function assertHomeInSight(path: string, home: string): void {
  if (!outOfSight(path) || !homeOutOfSight(home)) return;
  const problem = homeProblem(home);
  if (problem !== undefined) throw new SvcError("config_unreadable", problem);
}

/**
 * `assertHomeInSight`, then, with SVC_HOME in sight, throws the first directory below it on the way to `path` this
 * user may not look into (a `mcp-tokens` of root's, mode 0700), with its owner and what lets this user through:
 * whether `path` is there is unknown, so it is not said missing either.
 */
export function assertFileInSight(path: string, home: string): void {
  assertHomeInSight(path, home);
  if (!outOfSight(path)) return;
  const closed = closedDirectory(path);
  if (closed === undefined) return;
  throw new SvcError(
    "config_unreadable",
    `${path}: cannot be looked for: on the way to it, ${closed.named} cannot be looked into by ${thisUser()} — ${closedFix(closed, "run the command as the user who owns it", true)}`,
  );
}

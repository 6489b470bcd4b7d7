import { statSync } from "node:fs";
import { SvcError } from "../errors.js";
import { homeProblem } from "../io/homeWritable.js";

/**
 * Throws SVC_HOME's (`home`'s) problem alone when this user may not look for `path` in it (SVC_HOME, or a
 * directory on the way to it, closed to this user: EACCES): whether the file is there is unknown, so it is not
 * said missing (no login saved, no gateway running, a history file's mode). A file that is simply not there is
 * left to the caller.
 */
export function assertHomeInSight(path: string, home: string): void {
  try {
    statSync(path, { throwIfNoEntry: false });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") return;
  }
  const problem = homeProblem(home);
  if (problem !== undefined) throw new SvcError("config_unreadable", problem);
}

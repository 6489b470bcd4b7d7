import { statSync } from "node:fs";
import { SvcError } from "../../errors.js";
import { homeProblem } from "../../io/homeWritable.js";

/**
 * Throws SVC_HOME's (`home`'s) problem alone when this user may not look for `config` (a directory on the way to SVC_HOME
 * closed to it, EACCES): whether config.yaml is there is unknown, so it is not said missing, nor is svc mcp add
 * offered. A config.yaml that is simply not there, or an SVC_HOME that cannot hold one (a file in its place), is
 * left to the caller.
 */
export function assertConfigInSight(config: string, home: string): void {
  try {
    statSync(config, { throwIfNoEntry: false });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") return;
  }
  const problem = homeProblem(home);
  if (problem !== undefined) throw new SvcError("config_unreadable", problem);
}

import { assertHomeInSight } from "../homeInSight.js";

/**
 * Throws SVC_HOME's (`home`'s) problem alone when this user may not look for `config` (a directory on the way to SVC_HOME
 * closed to it, EACCES): whether config.yaml is there is unknown, so it is not said missing, nor is svc mcp add
 * offered. A config.yaml that is simply not there, or an SVC_HOME that cannot hold one (a file in its place), is
 * left to the caller.
 */
export function assertConfigInSight(config: string, home: string): void {
  assertHomeInSight(config, home);
}

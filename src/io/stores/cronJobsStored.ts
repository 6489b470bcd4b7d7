import { existsSync } from "node:fs";
import { svcPaths } from "../../config/paths.js";
import { profilesOnDisk } from "../profiles.js";
import { cronStore } from "./cronStore.js";

/**
 * Whether some profile's cron store holds a job, so a gateway with the webhook adapter off and no MCP
 * server still has its scheduler to run. A store that cannot be read counts: the gateway starts and
 * its scheduler names the file's problem.
 */
export function cronJobsStored(home: string): boolean {
  return profilesOnDisk(home).some((profile) => profileHasCronJobs(home, profile));
}

/** Whether `profile`'s cron store holds a job (one that cannot be read counts, as above). */
export function profileHasCronJobs(home: string, profile: string): boolean {
  const path = svcPaths(home, profile).cronJobs;
  if (!existsSync(path)) return false;
  try {
    return Object.keys(cronStore(path).read().records).length > 0;
  } catch {
    return true;
  }
}

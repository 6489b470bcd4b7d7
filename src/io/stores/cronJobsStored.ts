import { existsSync } from "node:fs";
import { svcPaths } from "../../config/paths.js";
import { profilesOnDisk } from "../profiles.js";
import { cronStore } from "./cronStore.js";
import { unusableCronStore } from "./unusableCronStore.js";

/**
 * Whether some profile's cron store holds a job, so a gateway with the webhook adapter off and no MCP
 * server still has its scheduler to run. A store that cannot be read counts: the gateway starts and
 * its scheduler names the file's problem. So does one whose `cron` directory is a link to nothing (or a file),
 * or whose `jobs.json` links into a directory that is not there (`unusableCronStore`): read through it, it
 * holds no job, though its jobs are there again once the link is.
 */
export function cronJobsStored(home: string): boolean {
  return profilesOnDisk(home).some((profile) => profileHasCronJobs(home, profile));
}

/** Whether `profile`'s cron store holds a job (one that cannot be read counts, as above). */
export function profileHasCronJobs(home: string, profile: string): boolean {
  const path = svcPaths(home, profile).cronJobs;
  if (!existsSync(path)) return unusableCronStore(home, profile) !== undefined;
  try {
    return Object.keys(cronStore(path).read().records).length > 0;
  } catch {
    return true;
  }
}

import { svcPaths } from "../../config/paths.js";
import { profilesOnDisk } from "../profiles.js";
import { lookupJob } from "./cronJobRecord.js";
import { cronStore } from "./cronStore.js";

/**
 * The profiles on disk other than `except` whose cron store holds a job of this id or name: where a job
 * looked for in the wrong profile (a `--profile` or `--route-profile` left out or given wrongly) is.
 */
export function profilesWithJob(home: string, ref: string, except: string): string[] {
  return profilesOnDisk(home).filter((profile) => {
    if (profile === except) return false;
    try {
      const jobs = cronStore(svcPaths(home, profile).cronJobs);
      return lookupJob(jobs.path, jobs.read().records, ref) !== undefined;
    } catch {
      // A store that cannot be read says nothing about the job: that profile is not suggested.
      return false;
    }
  });
}

/** The profiles on disk other than `except` whose cron store holds jobs, each with how many (records of any state). */
export function profilesWithJobs(home: string, except: string): { profile: string; count: number }[] {
  return profilesOnDisk(home).flatMap((profile) => {
    if (profile === except) return [];
    try {
      const count = Object.keys(cronStore(svcPaths(home, profile).cronJobs).read().records).length;
      return count === 0 ? [] : [{ profile, count }];
    } catch {
      return []; // a store that cannot be read is named by svc config check
    }
  });
}

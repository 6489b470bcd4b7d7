import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { DEFAULT_PROFILE, svcPaths } from "../../config/paths.js";
import { byWayOf, linkChainSync } from "../linkChain.js";
import { unusableDir, unusableProfileEntry } from "../profiles.js";
import { resolveLink } from "./atomicFile.js";

/**
 * Why `profile`'s cron store (`<its directory>/cron/jobs.json`) cannot be read or written as it stands, found
 * without creating anything: its entry under `profiles/` (`unusableProfileEntry`), its `cron` directory a
 * symbolic link to nothing or a file (`unusableDir`), also the default profile's, or `jobs.json` a link into a
 * directory that is not there. Read through such a link the store holds no job (a job fired there reads as one
 * to create), and `svc cron create` failed with a raw `ENOENT ... mkdir`. Undefined when it can be used, also
 * while `cron/` or `jobs.json` is not made yet (svc makes them), and for a name that is no profile's.
 */
export function unusableCronStore(home: string, profile: string | undefined): string | undefined {
  const entry = unusableProfileEntry(home, profile);
  if (entry !== undefined) return entry;
  let file: string;
  try {
    file = svcPaths(home, profile).cronJobs;
  } catch {
    return undefined; // not a profile's name: refused as such by the store's reader
  }
  const whose = `${profile === undefined || profile === DEFAULT_PROFILE ? "the default profile's" : `profile ${profile}'s`} cron jobs`;
  return unusableDir(dirname(file), whose) ?? linkIntoNothing(file, whose);
}

/**
 * Why `file`, a symbolic link, leads into a directory that is not there (a disk not mounted, a checkout moved),
 * named with where it leads in the end, every link on the way followed: a write would replace the link rather
 * than make the file it points to (`resolveLink`). A link to a file not made yet in a directory that is there
 * is none: the first write makes that file.
 */
function linkIntoNothing(file: string, whose: string): string | undefined {
  try {
    if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return undefined;
    statSync(file);
    return undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" || resolveLink(file) !== file) return undefined;
  }
  // Named where it leads in the end: the link it points to may be in a directory that is there.
  const chain = linkChainSync(file);
  const target = chain?.at(-1);
  if (chain === undefined || target === undefined) return undefined;
  return `${file}: a symbolic link to ${target}${byWayOf(chain)}, whose directory ${dirname(target)} is not there (missing or moved) — ${whose} are kept in the file it points to: restore that directory, or remove the link (svc makes the file)`;
}

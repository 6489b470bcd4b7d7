import { chownSync, existsSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";

/**
 * `mkdirSync(dir, { recursive: true, mode })` whose failure names its cause: Node 20's recursive mkdir
 * answers ENOENT ("no such file or directory") for a directory a read-only file system refused (EROFS).
 * The first missing directory is then made alone, which throws the real error (its `path` that directory).
 */
export function makeDirs(dir: string, mode = 0o700): void {
  try {
    mkdirSync(dir, { recursive: true, mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    let missing = dir;
    while (dirname(missing) !== missing && !existsSync(dirname(missing))) missing = dirname(missing);
    // A symbolic link to nothing is no directory to make: its ENOENT is the cause.
    if (dirname(missing) === missing || lstatSync(missing, { throwIfNoEntry: false }) !== undefined)
      throw err;
    mkdirSync(missing, { mode });
    // Made after all (it was removed and made again meanwhile): the rest as asked.
    mkdirSync(dir, { recursive: true, mode });
  }
}

/** The directory in which a failed `makeDirs` could not make its directory. */
export function refusingDir(err: unknown, dir: string): string {
  const path = (err as NodeJS.ErrnoException | undefined)?.path;
  return dirname(typeof path === "string" ? path : dir);
}

/** `dir` or the nearest directory above it that exists (where `makeDirs` starts making). */
function nearestDirectory(dir: string): string {
  let at = dir;
  while (dirname(at) !== at && statSync(at, { throwIfNoEntry: false })?.isDirectory() !== true)
    at = dirname(at);
  return at;
}

/**
 * `makeDirs` for a store's directory: the directories it makes get the owner and group of the directory they
 * are made in, where this process may give them (root), as a store file written there does
 * (`stores/atomicFile.ts`): the `cron/` of a `sudo svc cron create` in another user's home stays that user's,
 * so the gateway running as that user can read the jobs in it.
 */
export function makeStoreDirs(dir: string): void {
  const existing = nearestDirectory(dir);
  makeDirs(dir);
  if (existing === dir) return;
  const owner = statSync(existing, { throwIfNoEntry: false });
  if (owner === undefined || (owner.uid === process.getuid?.() && owner.gid === process.getgid?.())) return;
  for (let at = dir; at !== existing && dirname(at) !== at; at = dirname(at)) {
    try {
      chownSync(at, owner.uid, owner.gid);
    } catch {
      return; // not ours to give (EPERM): the directories are this user's
    }
  }
}

import {
  chownSync,
  closeSync,
  existsSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  statSync,
} from "node:fs";
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

/**
 * Creates `file` (empty, `mode`) when it is not there yet, with the owner and group of its directory where this
 * process may give them (root), as `makeStoreDirs` does for directories: the log a `sudo svc cron run` starts in
 * another user's home stays that user's, so that user's gateway can still write it. A file already there, or one
 * that cannot be made (its writer then says why), is left as it is.
 */
export function createAsDirectoryOwner(file: string, mode: number): void {
  let fd: number;
  try {
    fd = openSync(file, "wx", mode);
  } catch {
    return;
  }
  try {
    const owner = statSync(dirname(file));
    if (owner.uid !== process.getuid?.() || owner.gid !== process.getgid?.())
      fchownSync(fd, owner.uid, owner.gid);
  } catch {
    // Not ours to give (EPERM): the file is this user's.
  } finally {
    closeSync(fd);
  }
}

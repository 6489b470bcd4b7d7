import { existsSync, lstatSync, mkdirSync } from "node:fs";
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

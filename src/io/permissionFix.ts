import { closedDirectory } from "./closedDir.js";
import { thisUser } from "./userName.js";

/**
 * What to do about a file this process may not read (`EACCES`, `EPERM`: another user's file, such as one a
 * `sudo svc …` command created, or one whose mode leaves its owner out), or undefined for any other error. A file
 * behind a directory this user may not look into is named with that directory and the chmod that lets this user in.
 */
export function permissionFix(file: string, err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM") return undefined;
  // Refused by a directory on the way (a profile linked into a checkout of root's with mode 0700): the file may not
  // even be there, and no chown or chmod of it would let this user through.
  const closed = code === "EACCES" ? closedDirectory(file) : undefined;
  if (closed !== undefined)
    return `on the way to it, ${closed.named} cannot be looked into by ${thisUser()}: ${closed.fix}`;
  return `make it readable by the user svc runs as (uid ${process.getuid?.() ?? "?"}): give it to that user (chown) and chmod 600 ${file}`;
}

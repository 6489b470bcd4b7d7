import { chmodSync, fchmodSync, fstatSync, lstatSync } from "node:fs";
import { makeDirs, makeStoreDirs } from "./makeDirs.js";

/**
 * Whether `path` is svc's own directory or file to narrow: a symbolic link in its place points where its
 * owner chose (`logs` linked to `/var/log`, which svc running as root must not close to every other user),
 * and a device, pipe or socket (`gateway.log` linked to `/dev/null`) is not a store.
 */
function narrowable(path: string): boolean {
  try {
    const found = lstatSync(path, { throwIfNoEntry: false });
    return found !== undefined && (found.isDirectory() || found.isFile());
  } catch {
    return false;
  }
}

/**
 * Narrows `path` to `mode` (0700 for a directory, 0600 for a file), also when it already existed wider —
 * made by hand, restored from a backup, left by an older svc or another umask. What is gone, not ours to
 * change (another owner), or not svc's own directory or file (a symbolic link, a device, a pipe) is left as
 * it is.
 */
export function narrowMode(path: string, mode: number): void {
  if (!narrowable(path)) return;
  try {
    chmodSync(path, mode);
  } catch {
    // gone meanwhile, or not ours to change
  }
}

/**
 * Narrows an open file to `mode` when it is a regular file (its errors thrown): a device, pipe or socket
 * opened in its place (`gateway.log` linked to `/dev/null`, a log shipper's named pipe) keeps its mode.
 */
export function narrowOpenFile(fd: number, mode: number): void {
  if (fstatSync(fd).isFile()) fchmodSync(fd, mode);
}

/**
 * A private directory: made 0700, or narrowed to 0700 when it already existed wider. With `asParentOwner`, one
 * it makes gets the owner of the directory it is made in, where this process may give it (`makeStoreDirs`).
 */
export function privateDir(dir: string, options: { readonly asParentOwner?: boolean } = {}): void {
  if (options.asParentOwner === true) makeStoreDirs(dir);
  else makeDirs(dir);
  narrowMode(dir, 0o700);
}

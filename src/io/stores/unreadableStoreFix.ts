import { openFilesFix } from "../openFiles.js";
import { permissionFix } from "../permissionFix.js";

/**
 * What to do about a directory where svc keeps a file (a `mkdir -p` of the wrong path, a restore that made
 * one); `kept` is what svc keeps in that file.
 */
export function directoryInPlaceFix(kept = "this store"): string {
  return `it is a directory: move it away (svc keeps ${kept} in a file of that name)`;
}

/** Whether `err` is a file operation refused because the path is a directory (`rmSync` says `ERR_FS_EISDIR`). */
export function isDirectoryError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "EISDIR" || code === "ERR_FS_EISDIR";
}

/**
 * What to do about a store file that cannot be read: another user's (`permissionFix`), or a directory in
 * its place; undefined for any other error.
 */
export function unreadableStoreFix(path: string, err: unknown): string | undefined {
  if (isDirectoryError(err)) return directoryInPlaceFix();
  return permissionFix(path, err) ?? openFilesFix(err);
}

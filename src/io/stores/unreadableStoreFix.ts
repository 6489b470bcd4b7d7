import { openFilesFix } from "../openFiles.js";
import { permissionFix } from "../permissionFix.js";

/**
 * What to do about a store file that cannot be read: another user's (`permissionFix`), or a directory in
 * its place (a `mkdir -p` of the wrong path, a restore that made one); undefined for any other error.
 */
export function unreadableStoreFix(path: string, err: unknown): string | undefined {
  if ((err as NodeJS.ErrnoException | undefined)?.code === "EISDIR")
    return "it is a directory: move it away (svc keeps this store in a file of that name)";
  return permissionFix(path, err) ?? openFilesFix(err);
}

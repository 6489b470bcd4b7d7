import { chmodSync } from "node:fs";
import { makeDirs, makeStoreDirs } from "./makeDirs.js";

/**
 * Narrows `path` to `mode` (0700 for a directory, 0600 for a file), also when it already existed wider —
 * made by hand, restored from a backup, left by an older svc or another umask. What is gone, or not ours
 * to change (another owner), is left as it is.
 */
export function narrowMode(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch {
    // absent, or not ours to change
  }
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

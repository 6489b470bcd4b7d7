import { chmodSync, mkdirSync } from "node:fs";

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

/** A private directory: made 0700, or narrowed to 0700 when it already existed wider. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  narrowMode(dir, 0o700);
}

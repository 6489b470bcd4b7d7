import { statSync, utimesSync, writeFileSync } from "node:fs";

/**
 * Empties `file` in place, as `jq … file > file` does (the file stays, its inode too), and dates the change a
 * second after the file was made: made by a write just before, both could fall in one tick of the file
 * system's clock.
 */
export function emptyInPlace(file: string): void {
  writeFileSync(file, "");
  const { birthtimeMs, atime } = statSync(file);
  utimesSync(file, atime, new Date(birthtimeMs + 1000));
}

import { statSync } from "node:fs";

/**
 * Whether a blank store file was emptied in place (`jq … file > file`, `: > file`, `truncate -s 0`) rather
 * than made empty (`touch`, `: > file` of a new file). svc never writes a blank store, and each of its writes
 * puts a new file in place, so a blank file changed after it was made held records before. Where the file
 * system keeps no creation time (Node then gives 0, or the ctime), it cannot be told: taken as made empty.
 */
export function emptiedInPlace(path: string): boolean {
  try {
    const stats = statSync(path);
    return stats.birthtimeMs > 0 && stats.mtimeMs > stats.birthtimeMs;
  } catch {
    return false;
  }
}

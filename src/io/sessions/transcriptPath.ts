import { join, relative, sep } from "node:path";
import { SvcError } from "../../errors.js";

/**
 * Where a session's transcript is: its index entry's `file` under the sessions directory. The index is
 * written by the chat front end that shares the directory, so a `file` that climbs out of it (`../x`) is
 * refused rather than have mirrored payload text appended to (and the mode of) a file elsewhere.
 */
export function transcriptPath(dir: string, indexPath: string, key: string, file: string): string {
  const path = join(dir, file);
  const inside = relative(dir, path);
  if (inside !== "" && inside !== ".." && !inside.startsWith(`..${sep}`)) return path;
  throw new SvcError(
    "store_corrupt",
    `${indexPath}: session ${JSON.stringify(key)} names the transcript ${JSON.stringify(file)}, which is outside ${dir} — nothing written; correct its "file" (a path under that directory)`,
  );
}

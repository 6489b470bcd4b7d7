import { dirname } from "node:path";
import { noDirectoryAt } from "./noDirectoryAt.js";
import { fileInTheWay } from "./stores/atomicFile.js";

/**
 * Why the gateway log `file` cannot be written, as the user can act on it: a file (or a link to a device) in its directory's place
 * or a directory in its own (something moved there while the gateway ran); any other error (a full disk's
 * ENOSPC says itself) as the system gave it.
 */
export function logFileProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const inTheWay = fileInTheWay(dirname(file), err);
  if (inTheWay !== undefined) {
    // A link to a device (`logs -> /dev/null`) is no file to move: the link is what to change.
    const { said, fix } = noDirectoryAt(inTheWay);
    return `${said} — ${fix} (the gateway makes the directory again within a second)`;
  }
  if (code === "EISDIR")
    return `${file} is a directory — move that directory away (the gateway writes its log in a file of this name again within a second)`;
  return err instanceof Error ? err.message : String(err);
}

import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describeError, SvcError } from "../../errors.js";
import { homeOrOnTheWay } from "../noDirectoryAt.js";
import { historyDirInTheWay } from "./historyDirProblem.js";

export type ReadText = (path: string) => string;
export const readText: ReadText = (path) => readFileSync(path, "utf8");

/**
 * A history file's text, undefined when there is none. One this user may not read is not "no history":
 * the gateway keeps the files to its own user (0600 in a 0700 directory), so a command run as another
 * user (the gateway a service, the command a login shell) would otherwise say nothing was recorded.
 * The words avoid the errno names, which would make the CLI blame SVC_HOME instead.
 */
export function historyText(dir: string, name: string, read: ReadText): string | undefined {
  const path = join(dir, name);
  try {
    return read(path);
  } catch (err) {
    const error = historyReadError(dir, path, err);
    if (error === undefined) return undefined;
    throw error;
  }
}

/**
 * What a failed open or read of a history file at `path` tells the user: undefined for ENOENT (no file,
 * no history); see historyText.
 */
export function historyReadError(dir: string, path: string, err: unknown): SvcError | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return undefined;
  if (code === "EACCES" || code === "EPERM")
    return new SvcError(
      "store_corrupt",
      `${dir}: this user may not read the delivery history (permission denied) — the gateway keeps it readable by the user it runs as only (mode 0600 in a 0700 directory: it holds payloads), so run the command as that user (sudo -u <that user> svc ...)`,
      { cause: err },
    );
  // A link to a device (`deliveries -> /dev/null`) in the directory's place: the link is what to change.
  const way = code === "ENOTDIR" ? historyDirInTheWay(dir) : undefined;
  if (way !== undefined)
    return new SvcError(
      "store_corrupt",
      `${dir}: the delivery history cannot be read (${way.cause}) — ${way.fix}`,
      {
        cause: err,
      },
    );
  // A file in the directory's place fails the open of each history file in it: that file is what to move.
  if (code === "ENOTDIR" && holdsOtherThanDirectory(dir))
    return new SvcError(
      "store_corrupt",
      `${dir}: the delivery history cannot be read (${dir} is not a directory) — move away what is in its place: the gateway keeps its history in that directory`,
      { cause: err },
    );
  // SVC_HOME itself, or a name on the way to it, in the way (`SVC_HOME=/etc/passwd`, `/dev/null`): never svc's to
  // move, and said by the command's SVC_HOME problem, with SVC_HOME to set; the error alone here, as the stores say it.
  const noDirectory = noDirectoryAbove(dir);
  if (noDirectory !== undefined && homeOrOnTheWay(noDirectory))
    return new SvcError(
      "store_corrupt",
      `${path}: the delivery history cannot be read (${describeError(err)})`,
      { cause: err },
    );
  return new SvcError(
    "store_corrupt",
    `${path}: the delivery history cannot be read (${describeError(err)}) — move away what is in its place: the gateway writes its history there`,
    { cause: err },
  );
}

/** Whether something that is no directory is at `dir` (false when nothing is, or a path above it is no directory). */
function holdsOtherThanDirectory(dir: string): boolean {
  try {
    return !statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What stands, no directory, where `dir` or a directory on the way to it goes (the nearest name there is, from `dir`
 * up: `/etc/passwd` for `/etc/passwd/x/deliveries`); undefined when that is a directory, or cannot be looked at.
 */
function noDirectoryAbove(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    try {
      return statSync(at).isDirectory() ? undefined : at;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(at) === at) return undefined;
    }
  }
}

import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../errors.js";
import { MOVE_FILE_AWAY, noDirectoryAt } from "../noDirectoryAt.js";

/**
 * The gateway's refusal when the delivery history cannot be opened: the directory, why, and the ways out.
 * With `inPlaceOf` (the history file's name), the culprit is what holds that name in the directory (a
 * directory, a socket): it is moved away, not made a directory.
 */
export function historyNotOpened(dir: string, cause: string, inPlaceOf?: string): string {
  const fix =
    inPlaceOf === undefined
      ? "make it a directory this user can write (move away what is in its place)"
      : `move away what is in the place of ${inPlaceOf} (the gateway writes its history file there)`;
  return `${dir}: the delivery history cannot be opened (${cause}) — ${fix}, or set platforms.webhook.delivery_history: false`;
}

/** Why the history directory `dir` is none, and what to do, when a link or a device, pipe or socket is in its place. */
export interface HistoryDirInTheWay {
  readonly cause: string;
  readonly fix: string;
}

/**
 * What holds the history directory's name when it is no directory and no file to move away: a symbolic link to
 * something other than a directory (`deliveries -> /dev/null`, to drop the history: the device is the system's,
 * the link is what to change), or a device, named pipe or socket itself. Undefined for a directory, nothing, or a
 * plain file in its place (said as one to move away).
 */
export function historyDirInTheWay(dir: string): HistoryDirInTheWay | undefined {
  let found: ReturnType<typeof statSync>;
  try {
    found = statSync(dir, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (found === undefined || found.isDirectory()) return undefined;
  const { said, fix } = noDirectoryAt(dir);
  if (fix === MOVE_FILE_AWAY) return undefined;
  return { cause: said, fix: `${fix} (the gateway makes the directory)` };
}

/** historyNotOpened's refusal for what historyDirInTheWay found in the directory's place. */
export function historyDirRefusal(dir: string, way: HistoryDirInTheWay): string {
  return `${dir}: the delivery history cannot be opened (${way.cause}) — ${way.fix}, or set platforms.webhook.delivery_history: false`;
}

/** The history file's path when something other than a file holds its name (undefined when none does). */
export function notAFileAt(path: string): string | undefined {
  const held = statSync(path, { throwIfNoEntry: false });
  return held === undefined || held.isFile() ? undefined : path;
}

/**
 * Why the gateway could not open the delivery history `file` in `dir`, found without creating anything (for
 * `svc config check`): something else in the directory's or the file's place, or one this user cannot
 * write. Undefined when it can be opened, or is missing and will be made.
 */
export function historyDirProblem(dir: string, file: string): string | undefined {
  const path = join(dir, file);
  try {
    const found = statSync(dir, { throwIfNoEntry: false });
    if (found === undefined) return undefined;
    if (!found.isDirectory()) {
      const way = historyDirInTheWay(dir);
      return way === undefined
        ? historyNotOpened(dir, `${dir} is not a directory`)
        : historyDirRefusal(dir, way);
    }
    accessSync(dir, constants.W_OK | constants.X_OK);
    const held = statSync(path, { throwIfNoEntry: false });
    if (held === undefined) return undefined;
    if (!held.isFile()) return historyNotOpened(dir, `${path} is not a file`, file);
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (err) {
    return historyNotOpened(dir, describeError(err));
  }
  return undefined;
}

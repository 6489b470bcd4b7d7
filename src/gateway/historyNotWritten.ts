import { describeError } from "../errors.js";
import { directoryInPlace } from "../io/directoryInPlace.js";
import type { Logger } from "../io/log.js";
import { noDirectoryAt } from "../io/noDirectoryAt.js";
import { fileInTheWay } from "../io/stores/atomicFile.js";

/**
 * The delivery history writer's `onError`: a write that failed (said once until one succeeds again). A
 * directory in the place of history.jsonl, or something no directory in the place of the history's directory
 * `dir` (a file, a link to a device: `deliveries -> /dev/null`), made while the gateway runs, is named with its
 * fix, not as a bare EISDIR or EEXIST.
 */
export function historyNotWritten(logger: Logger, dir: string): (err: unknown) => void {
  return (err) => {
    const directory = directoryInPlace(err);
    const inTheWay = directory === undefined ? fileInTheWay(dir, err) : undefined;
    if (directory !== undefined)
      logger.warn(
        `[webhook] delivery history not written: ${directory} (the gateway writes its history file there); said once until a write succeeds again`,
      );
    else if (inTheWay !== undefined) {
      // A link to a device is no file to move: the link is what to change.
      const { said, fix } = noDirectoryAt(inTheWay);
      logger.warn(
        `[webhook] delivery history not written: ${said} — ${fix} (the gateway makes the directory); said once until a write succeeds again`,
      );
    } else
      logger.warn(
        { err: describeError(err) },
        "[webhook] delivery history not written (said once until a write succeeds again)",
      );
  };
}

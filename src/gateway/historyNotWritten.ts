import { describeError } from "../errors.js";
import { directoryInPlace } from "../io/directoryInPlace.js";
import type { Logger } from "../io/log.js";

/**
 * The delivery history writer's `onError`: a write that failed (said once until one succeeds again). A
 * directory in the place of history.jsonl (made while the gateway runs) is named with its fix, not as a bare
 * EISDIR.
 */
export function historyNotWritten(logger: Logger): (err: unknown) => void {
  return (err) => {
    const directory = directoryInPlace(err);
    if (directory === undefined)
      logger.warn(
        { err: describeError(err) },
        "[webhook] delivery history not written (said once until a write succeeds again)",
      );
    else
      logger.warn(
        `[webhook] delivery history not written: ${directory} (the gateway writes its history file there); said once until a write succeeds again`,
      );
  };
}

import { constants } from "node:buffer";
import { pendingRunOf } from "../actors/pendingRuns.js";
import type { AcceptedEvent } from "../streams/context.js";

/**
 * Prompt and extras surely short enough for a journal record: JSON escapes a UTF-16 unit to 6 characters at
 * most, a record is one JSON text of at most `MAX_STRING_LENGTH`, and the rest of it is far under the margin.
 */
const SURELY_RECORDABLE = Math.floor(constants.MAX_STRING_LENGTH / 6) - 65_536;

/**
 * Throws a RangeError (its request is answered 500) when the event's record could never be written: longer
 * than any JSON text, as a prompt quoting a large payload field several times can be. Checked before the
 * event joins a coalescing group, whose records (its update, then its run's) would throw later, from a timer.
 */
export function assertRecordable(event: AcceptedEvent): void {
  let length = event.prompt.length;
  for (const key in event.extra) length += key.length + (event.extra[key]?.length ?? 0);
  if (length <= SURELY_RECORDABLE) return;
  // Rare (hundreds of MB of text): measured exactly, with room left for the group run's coalescing note.
  if (JSON.stringify(pendingRunOf(event)).length > constants.MAX_STRING_LENGTH - 65_536)
    throw new RangeError("Invalid string length");
}

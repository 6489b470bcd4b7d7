import type { JournalRecord } from "./liveState.js";

const q = JSON.stringify;
/** A number as `JSON.stringify` writes it. */
const num = (n: number): string => (Number.isFinite(n) ? `${n}` : "null");

/**
 * The JSON text of a journal record, the text `JSON.stringify(record)` gives. The two records every
 * accepted event journals (its run accepted, then finished) are built by hand, without `JSON.stringify`
 * walking the objects: an accepted run's record holds its `PendingRun` fields, in the order
 * `pendingRunOf` makes them (measured in-process: an event's two records encoded, framed and CRC'd
 * ~30 % faster). Every other record goes through `JSON.stringify`.
 */
export function recordText(record: JournalRecord): string {
  switch (record.t) {
    case "a": {
      const { run } = record;
      // A run read from a newer version's file keeps the fields this version does not know.
      if (!onlyKnownFields(run)) return q(record);
      const event = run.event === undefined ? "" : `,"event":${q(run.event)}`;
      const cronJob = run.cronJob === undefined ? "" : `,"cronJob":${q(run.cronJob)}`;
      const unfilled = run.unfilled === undefined ? "" : `,"unfilled":${q(run.unfilled)}`;
      const madeId = run.madeId === undefined ? "" : `,"madeId":${q(run.madeId)}`;
      return `{"t":"a","run":{"profile":${q(run.profile)},"routeName":${q(run.routeName)}${event},"deliveryId":${q(run.deliveryId)}${madeId},"prompt":${q(run.prompt)},"extra":${q(run.extra)}${unfilled},"receivedAt":${num(run.receivedAt)}${cronJob}},"at":${num(record.at)}}`;
    }
    case "f":
      return record.w === undefined ? `{"t":"f","k":${q(record.k)}}` : `{"t":"f","k":${q(record.k)},"w":1}`;
    default:
      return q(record);
  }
}

const RUN_FIELDS = new Set([
  "profile",
  "routeName",
  "event",
  "deliveryId",
  "madeId",
  "prompt",
  "extra",
  "unfilled",
  "receivedAt",
  "cronJob",
]);

function onlyKnownFields(run: object): boolean {
  for (const key in run) if (!RUN_FIELDS.has(key)) return false;
  return true;
}

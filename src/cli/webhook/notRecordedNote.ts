import type { NotRecordedRecord } from "../../io/stores/deliveryHistory.js";

const counted = (n: number) => n.toLocaleString("en-US");

/**
 * The NOTE of a `not_recorded` row: `1,234 more refused requests since 2026-12-01T12:00:03Z not recorded one by one:
 * 429 Rate limit exceeded ×1,200, 401 Invalid signature ×34 (x-hub-signature-256 does not match)`.
 * `text` escapes what the sender could have written (a reason quotes none, but is shown as a request's is).
 */
export function notRecordedNote(record: NotRecordedRecord, text: (value: string) => string): string {
  const answers = record.answers.map(
    ({ status, outcome, reason, count }) =>
      `${status} ${text(outcome)} ×${counted(count)}${reason === undefined ? "" : ` (${text(reason)})`}`,
  );
  if (record.others !== undefined && record.others > 0)
    answers.push(`other answers ×${counted(record.others)}`);
  const since = record.since.replace(/\.\d+Z$/, "Z");
  const requests = record.count === 1 ? "refused request" : "refused requests";
  return `${counted(record.count)} more ${requests} since ${since} not recorded one by one: ${answers.join(", ")}`;
}

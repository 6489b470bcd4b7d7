import { NO_DELIVERY_ID, type NotRecordedRecord } from "../io/stores/deliveryHistory.js";
import type { NotRecordedCount } from "./refusedRecordAllowance.js";

/**
 * The history record of a route's refused requests counted instead of recorded: its kinds of answer, the
 * most frequent first, each reason cut as a request record's is (`cut`).
 */
export function notRecordedRecord(
  route: string,
  counted: NotRecordedCount,
  at: string,
  cut: (text: string) => string,
): NotRecordedRecord {
  const answers = [...counted.answers]
    .sort((a, b) => b.count - a.count)
    .map(({ status, outcome, reason, count }) => ({
      status,
      outcome,
      ...(reason === undefined ? {} : { reason: cut(reason) }),
      count,
    }));
  return {
    kind: "not_recorded",
    id: NO_DELIVERY_ID,
    at,
    route,
    since: new Date(counted.since).toISOString(),
    count: counted.count,
    answers,
    others: counted.others === 0 ? undefined : counted.others,
  };
}

/**
 * Whether a parsed history line is a record this version reads: one of its kinds, with each field it
 * reads of the type the gateway writes. A line edited by hand into other types (`"id": 5`, an `answers`
 * that is a string) is skipped as an unreadable line is, rather than failing `svc webhook deliveries` on
 * the whole history. Fields this version does not read (a newer version's) are not looked at; values it
 * does not know of a known field (a newer payload encoding) are left to the commands that use them.
 */
export function isReadableRecord(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  if (!isText(r.id) || !isText(r.at) || !isText(r.route)) return false;
  switch (r.kind) {
    case "request":
      return (
        isNumber(r.status) &&
        isText(r.outcome) &&
        REQUEST_TEXTS.every((name) => isOptional(r[name], isText)) &&
        isOptional(r.headers, Array.isArray)
      );
    case "run":
      return (
        isText(r.outcome) &&
        isOptional(r.event, isText) &&
        isOptional(r.received_at, isNumber) &&
        isOptional(r.error, isText)
      );
    case "delivery":
      return isText(r.platform) && isText(r.outcome) && isOptional(r.error, isText);
    case "not_recorded":
      return (
        isText(r.since) &&
        isNumber(r.count) &&
        Array.isArray(r.answers) &&
        r.answers.every(isCountedAnswer) &&
        isOptional(r.others, isNumber)
      );
    default:
      // A kind of a newer version: summarizeHistory would take it for a delivery.
      return false;
  }
}

/** A request record's optional text fields. */
const REQUEST_TEXTS = [
  "reason",
  "event",
  "event_header",
  "redelivery_of",
  "content_type",
  "payload",
  "payload_encoding",
  "payload_omitted",
] as const;

const isText = (value: unknown): value is string => typeof value === "string";
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isOptional = (value: unknown, check: (value: unknown) => boolean) =>
  value === undefined || check(value);

function isCountedAnswer(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const a = value as Record<string, unknown>;
  return isNumber(a.status) && isText(a.outcome) && isNumber(a.count) && isOptional(a.reason, isText);
}

/** What each field takes, 0 (minute) to 4 (day-of-week), for a value the parser could not read. */
const FIELD_VALUES = [
  "a number 0-59",
  "a number 0-23",
  "a number 1-31 (or L, the last day)",
  "a number 1-12 (or jan-dec)",
  "a number 0-7 (or sun-sat)",
];

/** Where an `L` written outside the day fields goes. */
export const LAST_DAY_PLACE = `L (the month's last day) goes in the day-of-month field ("0 0 L * *"), or after a weekday in the day-of-week field ("5L")`;

/**
 * cron-parser's refusals said as what to write: its own words (`Invalid characters, got value: x`,
 * `Invalid list value format`, `Invalid repeat: 1/2/3`) name neither the field's syntax nor, for `L`, `#` and
 * `W` outside the day fields, the extension and its place. `index` is the field's place, 0 (minute) to 4
 * (day-of-week); undefined leaves the parser's message as it is.
 */
export function parserWordsProblem(index: number, field: string, problem: string): string | undefined {
  const dayOfMonth = index === 2;
  const dayOfWeek = index === 4;
  // In the day-of-week field a W may be part of a day name (`wed`), which the parser takes.
  if (/^Invalid characters/.test(problem) && /w/i.test(field.replace(/wed/gi, ""))) {
    // Outside the days (`15W` in the minute field) there are no days to write: its place is said, as for L and #.
    return dayOfMonth || dayOfWeek
      ? `W (the weekday nearest a day, as Quartz writes it) is not read — write the days themselves ("15", "1-5")`
      : `W (the weekday nearest a day, as Quartz writes it) would go in the day-of-month field, the third, where svc does not read it either — write ${FIELD_VALUES[index] ?? "a number"} here`;
  }
  if (/^Invalid wildcard/.test(problem)) return `"*" stands alone, or before a step ("*/5")`;
  // `#` and `L` in the day fields, and `W` in day-of-month, are said before this (cronFieldHints.ts).
  if (field.includes("#") && !dayOfWeek && !dayOfMonth) {
    return `"#" (the month's Nth weekday, "1#2": its second Monday) goes in the day-of-week field, the fifth`;
  }
  if (!dayOfMonth && !dayOfWeek && /^Invalid characters/.test(problem) && /l/i.test(field))
    return LAST_DAY_PLACE;
  if (/^Invalid list value format/.test(problem))
    return `a list is values separated by single commas, none at its start or end ("1,15")`;
  if (/^Invalid range: /.test(problem))
    return `a range is two values and one "-" ("1-5"), a step after it if any ("1-5/2")`;
  if (/^Invalid repeat: /.test(problem))
    return `a step is one "/" and a whole number, after a value, a range or * ("*/15", "1-30/5")`;
  if (/^Invalid characters/.test(problem))
    return `write ${FIELD_VALUES[index] ?? "a number"}, a range ("1-5"), a list ("1,15"), a step ("*/15") or *`;
  return undefined;
}

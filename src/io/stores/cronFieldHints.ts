/**
 * What to write instead of two cron fields other schedulers take and cron-parser refuses in words that say
 * nothing of them (`Invalid range: 1-2-3`, `Invalid characters, got value: 15W`).
 */

/**
 * `1-2-3` (a list typed with dashes): a range with more than two ends, said with the range or list meant,
 * in the field's own words (`MON-WED-FRI`). `problem` is cron-parser's refusal of the field alone; a range
 * written high to low (`Invalid range: 5-1, min(5) > max(1)`) is not one of these.
 */
export function manyEndedRange(field: string, problem: string): string | undefined {
  const values = /^Invalid range: (\d+(?:-\d+){2,})$/.exec(problem);
  if (values === null) return undefined;
  const item = field.split(",").find((part) => (part.split("/")[0] as string).split("-").length > 2);
  if (item === undefined) return undefined;
  const range = item.split("/")[0] as string;
  const step = item.slice(range.length);
  const ends = range.split("-");
  const numbers = (values[1] as string).split("-").map(Number);
  const inOrder = numbers.every((value, at) => at === 0 || value > (numbers[at - 1] as number));
  const oneRange = inOrder ? `"${ends[0]}-${ends.at(-1)}${step}"` : "lower end first";
  const list = step === "" ? `, or a list, "${ends.join(",")}"` : "";
  return `a range has two ends, and "${range}" has ${ends.length} — write one range, ${oneRange}${list}`;
}

/** A day-of-month of days and `L` only, once its `W`s are taken out (`15W` → `15`, `1W,15W` → `1,15`). */
const PLAIN_DAYS = /^[\dL]+(?:[-/][\dL]+)*(?:,[\dL]+(?:[-/][\dL]+)*)*$/i;

/** `15W`, `LW`: Quartz's weekday nearest a day, which svc does not read (its day-of-month field only). */
export function nearestWeekday(field: string): string | undefined {
  if (!/w/i.test(field)) return undefined;
  const without = field.replace(/w/gi, "");
  const write = PLAIN_DAYS.test(without)
    ? `write the day without it, "${without}"`
    : "write the days themselves";
  return `W (the weekday nearest a day, as Quartz writes it) is not read — ${write} (L is the month's last day)`;
}

const LAST_FRIDAY = '"5L", the last Friday';
const SECOND_FRIDAY = '"5#2", the second Friday';

/**
 * `L` or `#` where its field does not take it that way (`1L` as a day of the month, `L` alone as a weekday,
 * `5#` or `1#6`), which cron-parser refused as `CronDayOfMonth Validation error, got value 1L ...` or
 * `invalid dayOfWeek occurrence number (#)`: said with how each is written. `index` is the field's (2:
 * day-of-month, 4: day-of-week).
 */
export function lastOrNthProblem(index: number, field: string, problem: string): string | undefined {
  if (index === 2 && field.includes("#"))
    return `# goes in the day-of-week field, between a weekday and which of its weeks in the month, 1 to 5 (${SECOND_FRIDAY})`;
  if (index === 2 && /^CronDayOfMonth Validation error/.test(problem))
    return `L in day-of-month stands alone, for the month's last day ("L"); a weekday's last one in the month is written in day-of-week (${LAST_FRIDAY})`;
  if (index === 4 && /^CronDayOfWeek Validation error/.test(problem))
    return `L in day-of-week goes after one weekday, for its last one in the month (${LAST_FRIDAY}); the month's last day is L in day-of-month ("0 9 L * *")`;
  if (index === 4 && field.includes("#"))
    return `# goes between one weekday and which of its weeks in the month, 1 to 5, alone in the field (${SECOND_FRIDAY})`;
  return undefined;
}

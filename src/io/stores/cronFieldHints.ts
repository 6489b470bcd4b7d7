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

/**
 * cron-parser's refusals of the extensions to cron it reads (`L`, `#`) and of the one it does not (`W`, the
 * weekday nearest a day), said as what to write: its own words (`Invalid characters, got value: 15W`,
 * `Constraint error, invalid dayOfWeek occurrence number (#)`, `CronDayOfWeek Validation error, unexpected
 * standalone L`) name neither the extension nor its place. `index` is the field's place, 0 (minute) to 4
 * (day-of-week); undefined leaves the parser's message as it is.
 */
export function extensionProblem(index: number, field: string, problem: string): string | undefined {
  const dayOfMonth = index === 2;
  const dayOfWeek = index === 4;
  // In the day-of-week field a W may be part of a day name (`wed`), which the parser takes.
  if (/^Invalid characters/.test(problem) && /w/i.test(field.replace(/wed/gi, ""))) {
    return `W (the weekday nearest a day, as Quartz writes it) is not read — write the days themselves ("15", "1-5")`;
  }
  if (/^Invalid wildcard/.test(problem)) return `"*" stands alone, or before a step ("*/5")`;
  if (field.includes("#") && !dayOfWeek) {
    return `"#" (the month's Nth weekday, "1#2": its second Monday) goes in the day-of-week field, the fifth`;
  }
  if (dayOfWeek && /# and .* special characters are incompatible/.test(problem.replaceAll("`", ""))) {
    return `a weekday's occurrence ("1#2": the month's second Monday) stands alone in its field, without a list, range, step or L — write one job for each`;
  }
  if (dayOfWeek && (/occurrence number \(#\)/.test(problem) || /^Invalid characters/.test(problem))) {
    return `"#" joins a weekday and which of its occurrences in the month it is, 1-5 ("1#2": the second Monday)`;
  }
  if (dayOfWeek && /standalone L/.test(problem)) {
    return `L alone is the month's last day and goes in the day-of-month field ("0 0 L * *"); in the day-of-week field it follows a weekday ("5L": the month's last Friday)`;
  }
  if (dayOfWeek && /CronDayOfWeek Validation error/.test(problem)) {
    return `L follows a weekday's number, 0-7 ("5L": the month's last Friday)`;
  }
  if (dayOfMonth && /CronDayOfMonth Validation error/.test(problem)) {
    return `L stands alone in the day-of-month field, for the month's last day ("0 0 L * *"); after a weekday, in the day-of-week field, it names the month's last one of that weekday ("5L")`;
  }
  if (!dayOfMonth && !dayOfWeek && /^Invalid characters/.test(problem) && /l/i.test(field)) {
    return `L (the month's last day) goes in the day-of-month field ("0 0 L * *"), or after a weekday in the day-of-week field ("5L")`;
  }
  return undefined;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Why the ISO date `text` starts with is no date, when it names a day past its month's end
 * (`2027-02-29 is no date: February 2027 has 28 days`): JavaScript reads such a day as one of the next
 * month (2027-03-01), so a job postponed by hand to it would run on a day no one wrote. Undefined
 * otherwise (a month or day JavaScript refuses by itself is left to it).
 */
export function missingDay(text: string): string | undefined {
  const match = /^\s*(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (match === null) return undefined;
  const [, year, month, day] = match as unknown as [string, string, string, string];
  const monthIndex = Number(month) - 1;
  const name = MONTHS[monthIndex];
  if (name === undefined) return undefined;
  const days = daysIn(Number(year), monthIndex + 1);
  return Number(day) > days
    ? `${year}-${month}-${day} is no date: ${name} ${year} has ${days} days`
    : undefined;
}

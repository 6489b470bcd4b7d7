/** Zones that name UTC itself: leaving them out changes nothing. */
const UTC_NAMES = new Set(["utc", "gmt", "etc/utc", "etc/gmt", "universal", "zulu"]);

/** Whether `word` is a time zone name (`Europe/Paris`, `UTC`, `EST`) and no cron field (no day name is one). */
function isTimeZone(word: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(word)) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: word });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a schedule that names its time zone cannot be taken: svc has no time zone per job, every schedule is
 * UTC. `zone` as written (`CRON_TZ=Europe/Paris`, `UTC`); `five` the five fields without it, when known.
 */
export function zoneRefusal(zone: string, name: string, five?: readonly string[]): string {
  if (five !== undefined && UTC_NAMES.has(name.toLowerCase()))
    return `a time zone (${zone}) cannot be given — schedules are evaluated in UTC already: write "${five.join(" ")}"`;
  return `a time zone (${zone}) cannot be given — schedules are evaluated in UTC: leave it out and write the hours in UTC (09:00 in UTC+1 is "0 8 * * *")`;
}

/**
 * Six fields of which the first or the last is a time zone name (`0 9 * * * Europe/Paris`, as some
 * schedulers take one beside the expression): said as a time zone, not as the seconds field it would
 * otherwise be taken for, with the hours of the rest then meaning another time than the user's.
 */
export function zoneField(fields: readonly string[]): string | undefined {
  if (fields.length !== 6) return undefined;
  const last = fields[5] as string;
  if (isTimeZone(last)) return zoneRefusal(last, last, fields.slice(0, 5));
  const first = fields[0] as string;
  if (isTimeZone(first)) return zoneRefusal(first, first, fields.slice(1));
  return undefined;
}

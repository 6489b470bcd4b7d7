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
  if (UTC_NAMES.has(name.toLowerCase()))
    return `a time zone (${zone}) cannot be given — schedules are evaluated in UTC already: ${five === undefined ? "leave it out" : `write "${five.join(" ")}"`}`;
  return `a time zone (${zone}) cannot be given — schedules are evaluated in UTC: leave it out and write the hours in UTC (${inUtc(name) ?? '09:00 in UTC+1 is "0 8 * * *"'})`;
}

/** The zone's offset from UTC in minutes at `at` (`GMT+05:30` → 330), or undefined for a name that is no zone. */
function offsetMinutes(zone: string, at: Date): number | undefined {
  try {
    const named = new Intl.DateTimeFormat("en", { timeZone: zone, timeZoneName: "longOffset" })
      .formatToParts(at)
      .find((part) => part.type === "timeZoneName")?.value;
    const offset = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(named ?? "");
    if (offset === null) return undefined;
    if (offset[1] === undefined) return 0;
    return (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]));
  } catch {
    return undefined;
  }
}

/** `09:00` of a zone `offset` minutes ahead of UTC, in UTC (`08:00 UTC` for +60). */
function nineInUtc(offset: number): string {
  const minutes = (((9 * 60 - offset) % 1440) + 1440) % 1440;
  // 09:00 in a zone 9 hours or more ahead of UTC is on the day before in UTC (a day-of-week moves with it).
  const dayBefore = 9 * 60 - offset < 0 ? " the day before" : "";
  return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")} UTC${dayBefore}`;
}

/**
 * 09:00 of zone `name` in UTC, in January and in July when the zone changes its clocks between them (daylight
 * saving time, which a UTC schedule does not follow); undefined for a name that is no zone.
 */
function inUtc(name: string): string | undefined {
  const year = new Date().getUTCFullYear();
  const january = offsetMinutes(name, new Date(Date.UTC(year, 0, 15)));
  const july = offsetMinutes(name, new Date(Date.UTC(year, 6, 15)));
  if (january === undefined || july === undefined) return undefined;
  if (january === july) return `09:00 in ${name} is ${nineInUtc(january)}`;
  return `09:00 in ${name} is ${nineInUtc(january)} in January and ${nineInUtc(july)} in July: a UTC schedule does not follow ${name}'s clock changes, so there its runs move by the change twice a year`;
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

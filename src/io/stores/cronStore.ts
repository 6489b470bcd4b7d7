import { randomBytes } from "node:crypto";
import { nameCharNote } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { requiredAtFirstUse } from "../../requiredAtFirstUse.js";
import { lastOrNthProblem, manyEndedRange, nearestWeekday } from "./cronFieldHints.js";
import { LAST_DAY_PLACE, parserWordsProblem } from "./cronParserWords.js";
import { lookalikeCharacter, shownField } from "./lookalikeCharacters.js";
import { missingDay } from "./missingDay.js";
import { zoneField, zoneRefusal } from "./scheduleZone.js";
import { createVersionedStore, type VersionedStore } from "./versionedJson.js";

// Required at the first cron expression: a start that parses none (no cron job, or interval schedules only)
// loads neither cron-parser nor luxon (~380 KB of the bundle).
const cronParser = requiredAtFirstUse<typeof import("cron-parser")>("cron-parser");
const parser = () => cronParser().CronExpressionParser;

export type CronJobState = "enabled" | "paused" | "disabled";

export interface CronJob {
  readonly id: string;
  readonly name: string;
  /** A 5-field cron expression (UTC), an `@hourly`-style macro, or an interval (`every 15m`, `30s`, `2h`). */
  readonly schedule: string;
  readonly prompt: string;
  readonly deliver: string;
  readonly deliver_extra: Readonly<Record<string, string>>;
  readonly state: CronJobState;
  readonly last_run?: {
    readonly at: string;
    /** `interrupted`: the gateway's stop ended the run (not a failure). */
    readonly status: "ok" | "error" | "interrupted";
    readonly trigger: string;
    readonly error?: string;
  };
  /** ISO time of the next scheduled run; absent while the job is not enabled. */
  readonly next_run?: string;
  /** ISO text as svc writes it; a number (epoch) written by hand is kept as it is. */
  readonly created_at?: string | number;
}

const INTERVAL = /^(?:every\s+)?(\d+)\s*(s|m|h|d)$/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** How often a job runs: a fixed interval, or a cron expression evaluated in UTC. */
export type Schedule = { kind: "interval"; ms: number } | { kind: "cron"; expression: string };

const MAX_INTERVAL_MS = 36_500 * 86_400_000;

/** The macros cron-parser reads as fixed schedules (not `@reboot`, which has no time; `@midnight` is `@daily`). */
const CRON_MACROS = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@hourly"]);

/** Every macro a schedule may be written as (any case), as the refusals and `svc cron create --help` name them. */
export const SCHEDULE_MACROS_TEXT =
  "@hourly, @daily (or @midnight), @weekly, @monthly, @yearly (or @annually)";

const FIVE_FIELDS = `expected 5 cron fields (minute hour day-of-month month day-of-week, e.g. "*/15 * * * *"), a macro (${SCHEDULE_MACROS_TEXT}) or an interval like "every 15m", "30s", "2h", "1d"`;

/**
 * Six or seven fields: a seconds field first (Quartz, node-cron, Spring) and, with seven, a year field
 * last (Quartz); six fields whose last is a year (AWS EventBridge) have it last. Said with the five fields
 * meant, since a generic "expected 5 cron fields" leaves the user to guess which field is the extra one.
 */
function extraFields(fields: readonly string[]): string | undefined {
  const yearLast = /^(?:\d{4}(?:[-,/]\d+)*)$/.test(fields.at(-1) as string);
  let five: readonly string[];
  let extra: string;
  let seconds = true;
  if (fields.length === 7) {
    five = fields.slice(1, 6);
    extra = "a seconds field first and a year field last (as Quartz writes them)";
  } else if (fields.length === 6 && yearLast) {
    five = fields.slice(0, 5);
    extra = "a year field last";
    seconds = false;
  } else if (fields.length === 6) {
    five = fields.slice(1);
    extra = "a seconds field first (as Quartz, node-cron or Spring write it)";
  } else return undefined;
  const fix = `write "${five.join(" ")}"`;
  return `${fields.length} fields, with ${extra}: svc schedules have 5 (minute hour day-of-month month day-of-week)${seconds ? ` and run at most once a minute — ${fix}, or for runs within a minute an interval like "30s"` : `, and no year — ${fix}`}`;
}

/** `daily` (a macro written without its `@`, as some schedulers take it): the macro meant. */
function withoutAt(trimmed: string): string | undefined {
  const word = trimmed.toLowerCase();
  if (!/^(?:hourly|daily|midnight|weekly|monthly|yearly|annually)$/.test(word)) return undefined;
  return `a macro is written with @ — did you mean @${word}?`;
}

const SPELLED_UNIT =
  /^(?:every\s+)?(\d+)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|w)$/i;

/** `every minute`, `every hour` (as people say it): an interval without its number, which is 1. */
const UNCOUNTED_UNIT = /^every\s+(?:a\s+|one\s+)?(second|minute|hour|day|week)$/i;

/** `every month`, `every 3 months`, `every 1y`: a calendar unit, which no interval has (months and years vary in length). */
const CALENDAR_UNIT = /^(?:every\s+)?(?:(\d+)\s*|(?:a|one)\s+)?(months?|mo|years?|yrs?|yr|y)$/i;

/** The monthly or yearly schedule meant by a calendar unit, or undefined for another schedule. */
function calendarInterval(trimmed: string): string | undefined {
  const calendar = CALENDAR_UNIT.exec(trimmed);
  if (calendar === null) return undefined;
  const count = calendar[1] === undefined ? 1 : Number(calendar[1]);
  const months = /^mo/i.test(calendar[2] as string);
  const unit = "an interval's unit is s, m, h or d (a month or a year has no one length)";
  if (count === 1) return `${unit} — did you mean "${months ? "@monthly" : "@yearly"}"?`;
  if (!months) return `${unit} — a schedule repeats at most once a year ("@yearly")`;
  return count <= 12 && 12 % count === 0
    ? `${unit} — did you mean "0 0 1 */${count} *" (00:00 UTC on the 1st, every ${count} months from January)?`
    : `${unit} — write a cron expression naming the months, such as "0 0 1 1,7 *" (00:00 UTC on the 1st of January and July)`;
}

/** `1h30m`, `every 2h 30m` (Go's and systemd's durations) and `1.5h`: a length no one unit writes as written. */
const MIXED_UNITS = /^(?:every\s+)?((?:\d+\s*[smhd]\s*){2,}|\d*\.\d+\s*[smhd])$/i;

/** `ms` as the grammar writes it, in its largest whole unit (`90m`, `2d`), or undefined for a fraction of a second. */
function intervalText(ms: number): string | undefined {
  for (const unit of ["d", "h", "m", "s"]) {
    const count = ms / (UNIT_MS[unit] as number);
    if (Number.isInteger(count) && count > 0) return `every ${count}${unit}`;
  }
  return undefined;
}

/**
 * `every 5 minutes`, `30sec`, `2 weeks`, `every minute`: an interval with its unit spelt out, said as the
 * grammar writes it; `1h30m` or `1.5h`, as the whole number of one unit it adds up to.
 */
function spelledInterval(trimmed: string): string | undefined {
  const calendar = calendarInterval(trimmed);
  if (calendar !== undefined) return calendar;
  const spelled = SPELLED_UNIT.exec(trimmed);
  const uncounted = spelled === null ? UNCOUNTED_UNIT.exec(trimmed) : null;
  if (spelled !== null || uncounted !== null) {
    const count = spelled === null ? 1 : Number(spelled[1]);
    const unit = ((spelled === null ? uncounted?.[1] : spelled[2]) ?? "").toLowerCase();
    const meant = unit.startsWith("w") ? `every ${count * 7}d` : `every ${count}${unit[0]}`;
    return `${spelled === null ? "an interval is a number and a unit of one letter" : "an interval's unit is one letter"}, s, m, h or d — did you mean "${meant}"?`;
  }
  const mixed = MIXED_UNITS.exec(trimmed);
  if (mixed === null) return undefined;
  let ms = 0;
  for (const [, count, unit] of (mixed[1] as string).matchAll(/(\d*\.?\d+)\s*([smhd])/gi))
    ms += Number(count) * (UNIT_MS[(unit as string).toLowerCase()] as number);
  const meant = intervalText(Math.round(ms));
  return `an interval is a whole number and one unit, s, m, h or d${meant === undefined ? "" : ` — did you mean "${meant}"?`}`;
}

/**
 * `every 1M`: units are read in any case (`EVERY 1H`), so an `M` is minutes, though some write it for
 * months. Said when the job is made, with the monthly forms; undefined for any other schedule.
 */
export function capitalMinutesNote(text: string): string | undefined {
  const interval = INTERVAL.exec(text.trim());
  if (interval === null || interval[2] !== "M") return undefined;
  return `schedule "${text}": M is read as minutes (an interval's unit is read in any case), so the job runs every ${interval[1]} minute${interval[1] === "1" ? "" : "s"} — for a run once a month write "@monthly" or a cron expression such as "0 9 1 * *" (09:00 UTC on the 1st)`;
}

/**
 * A schedule written with the quotes around it that a shell line or a YAML file needed (`'0 9 * * *'` in
 * jobs.json, or passed through a second layer of quoting): what is inside them, when that is a schedule.
 */
function withoutQuotes(trimmed: string): string | undefined {
  // Typographic quotes too (“0 9 * * *”), as a document or a chat app shows a quoted schedule.
  const quoted = /^(['"`\u2018\u2019\u201c\u201d])(.+)(['"`\u2018\u2019\u201c\u201d])$/s.exec(trimmed);
  if (quoted === null) return undefined;
  const inside = (quoted[2] as string).trim();
  try {
    parseSchedule(inside);
    return inside;
  } catch {
    return undefined;
  }
}

export function parseSchedule(text: string): Schedule {
  const trimmed = text.trim();
  const unquoted = withoutQuotes(trimmed);
  if (unquoted !== undefined)
    throw new SvcError(
      "usage",
      `schedule "${text}": the quotes are part of the text here — write ${unquoted} without them`,
    );
  const interval = INTERVAL.exec(trimmed);
  if (interval !== null) {
    const ms = Number(interval[1]) * (UNIT_MS[(interval[2] as string).toLowerCase()] as number);
    if (ms < 1000) throw new SvcError("usage", `schedule "${text}": an interval must be at least 1s`);
    // Past this the next run is not a date JavaScript can hold ("Invalid time value").
    if (!(ms <= MAX_INTERVAL_MS))
      throw new SvcError("usage", `schedule "${text}": an interval must be at most 36500d (100 years)`);
    return { kind: "interval", ms };
  }
  const fields = trimmed.split(/\s+/);
  // cronie's `CRON_TZ=Europe/Paris 0 9 * * *`: svc has no time zone per job, every schedule is UTC.
  const zone = /^(?:CRON_TZ|TZ)=(\S*)/i.exec(trimmed);
  if (zone !== null) {
    throw new SvcError("usage", `schedule "${text}": ${zoneRefusal(zone[0], zone[1] as string)}`);
  }
  if (!trimmed.startsWith("@") && fields.length !== 5) {
    throw new SvcError(
      "usage",
      `schedule "${text}": ${withoutAt(trimmed) ?? spelledInterval(trimmed) ?? zoneField(fields) ?? extraFields(fields) ?? FIVE_FIELDS}`,
    );
  }
  // A field svc refuses before cron-parser reads it (H, a misnamed month or weekday): the first wrong field,
  // in the order they are written, is named, whatever its mistake (`60 * * * Monday` names the minute). Only
  // then is each field parsed alone: a cron_job route checks its job's schedule on every event.
  if (!trimmed.startsWith("@") && fields.some((field, index) => refusedBeforeParsing(index, field))) {
    const problem = firstFieldProblem(fields) as string;
    throw new SvcError("usage", `schedule "${text}": not a valid cron expression (${problem})`);
  }
  // Macros are read in any case (`@DAILY`), as interval units and day and month names are; crontab's
  // `@midnight` is `@daily` (cron-parser does not know it).
  const macro = trimmed.toLowerCase() === "@midnight" ? "@daily" : trimmed.toLowerCase();
  const expression = trimmed.startsWith("@") ? macro : trimmed;
  if (trimmed.startsWith("@") && !CRON_MACROS.has(expression)) {
    // crontab's @reboot runs at cron's start, which is no time a schedule can name.
    const why =
      expression === "@reboot" ? "@reboot (at each start) names no time to run at" : "unknown macro";
    // Go's cron (robfig/cron, and the tools built on it) writes an interval `@every 5m`.
    if (/^@every(?:\s|$)/.test(expression)) {
      const meant = trimmed.slice(1).replace(/^every\s*/i, "every ");
      throw new SvcError(
        "usage",
        `schedule "${text}": an interval is written without @ — ${INTERVAL.test(meant) ? `did you mean "${meant}"?` : `write "every <n><unit>": a whole number and one unit, s, m, h or d (1h30m is "every 90m")`}`,
      );
    }
    throw new SvcError(
      "usage",
      `schedule "${text}": ${why} — use one of ${SCHEDULE_MACROS_TEXT}, 5 cron fields or an interval like "every 1h"`,
    );
  }
  const problem = cronProblem(expression) ?? dayRuleProblem(expression);
  if (problem === undefined) return { kind: "cron", expression };
  // Only a list that repeats a value is written out again: a cron_job route checks its job on every event.
  const read = /duplicate values found/.test(problem) ? withoutRepeats(fields) : expression;
  const remaining = read === expression ? problem : (cronProblem(read) ?? dayRuleProblem(read));
  if (remaining === undefined) return { kind: "cron", expression: read };
  throw new SvcError(
    "usage",
    `schedule "${text}": not a valid cron expression (${failingField(read.split(/\s+/)) ?? neverRuns(read, remaining)})`,
  );
}

const FIELD_LABELS = ["minute", "hour", "day-of-month", "month", "day-of-week"];

/**
 * `0 0 31 2 *\/2`: cron-parser accepts it (either day field would do: February's Sundays, Tuesdays, ...), but
 * under crontab's day rule (`bothDaysMatch`) a day must match both, and the 31st never comes in February:
 * the job would never run, and working out its next run failed with cron-parser's bare words.
 */
function dayRuleProblem(expression: string): string | undefined {
  const days = bothDaysMatch(expression);
  if (days === undefined || !/Invalid explicit day of month/.test(cronProblem(days.byMonthDay) ?? ""))
    return undefined;
  const [, , monthDay, month, weekDay] = expression.split(/\s+/);
  return `day-of-month "${monthDay}" never comes in month "${month}", and a day must match it as well as day-of-week "${weekDay}", which starts with * (crontab's rule): the job would never run`;
}

/** `0 0 31 2 *`: every field is valid alone, but the day never comes in that month. */
function neverRuns(expression: string, problem: string): string {
  if (!/Invalid explicit day of month/.test(problem)) return problem;
  const [, , monthDay, month] = expression.split(/\s+/);
  return `day-of-month "${monthDay}" never comes in month "${month}": the job would never run`;
}

/**
 * cron-parser's refusal with the field it is about: its messages name none (`Constraint error, got value 60
 * expected range 0-59` fits the minute and the day-of-month) and a range missing an end reads
 * `got range NaN-1`. Each field is tried alone, the others `*`.
 */
function failingField(fields: readonly string[]): string | undefined {
  return fields.length === FIELD_LABELS.length ? firstFieldProblem(fields) : undefined;
}

/** Jenkins' H, or a word that is no name of its field, `field` at `index` (0: minute ... 4: day-of-week). */
function refusedBeforeParsing(index: number, field: string): boolean {
  return hashed(field) || (lookalikeCharacter(field) === undefined && misnamed(index, field) !== undefined);
}

// Jenkins' H (a hashed minute) is not cron: the parser takes it as a new random value at every reading, so
// the job would run at a different minute each time its next run is worked out. No month or day name
// begins with H.
const hashed = (field: string): boolean => /^h/i.test(field);

/**
 * The first of the five fields that is wrong, in field order, named with what is wrong with it: Jenkins' H,
 * a word that is no name of its field (`Monday`, `Sept`), or what cron-parser refuses in it alone.
 */
function firstFieldProblem(fields: readonly string[]): string | undefined {
  for (const [index, field] of fields.entries()) {
    if (hashed(field))
      return `${FIELD_LABELS[index]} field "${field}": H (a hashed value) is not part of cron — write the minute or hour itself, e.g. "17 * * * *"`;
    // A letter outside ASCII (`mön`) is named by the field's own check, not read as two words.
    const misnamedWord = lookalikeCharacter(field) === undefined ? misnamed(index, field) : undefined;
    if (misnamedWord !== undefined) return `${FIELD_LABELS[index]} field "${field}": ${misnamedWord}`;
    const said = fieldProblem(fields, index);
    if (said !== undefined) return said;
  }
  return undefined;
}

/** What cron-parser refuses in field `index` alone (the others `*`), said with the field's name. */
function fieldProblem(fields: readonly string[], index: number): string | undefined {
  const field = fields[index] as string;
  const problem = cronProblem(fields.map((other, at) => (at === index ? other : "*")).join(" "));
  // A list naming a value twice is read as a set (withoutRepeats): not this field's fault.
  if (problem === undefined || /duplicate values found/.test(problem)) return undefined;
  const lookalike = lookalikeCharacter(field);
  if (lookalike !== undefined) return `${FIELD_LABELS[index]} field "${shownField(field)}": ${lookalike}`;
  const weekdayNearest = index === 2 ? nearestWeekday(field) : undefined;
  if (weekdayNearest !== undefined) return `${FIELD_LABELS[index]} field "${field}": ${weekdayNearest}`;
  const reversed = /Invalid range: (\d+)-(\d+), min/.exec(problem);
  const manyEnds = manyEndedRange(field, problem) ?? lastOrNthProblem(index, field, problem);
  const outside = /^Constraint error, got (?:value|range) (\S+) expected range (\d+-\d+)$/.exec(problem);
  const said =
    manyEnds !== undefined
      ? manyEnds
      : /NaN/.test(problem)
        ? `a range needs a value on each side of its "-" (${FIELD_LABELS[index]} values are ${problem.replace(/.*expected range /, "")})`
        : /cannot repeat at every/.test(problem)
          ? "a step (/N) must be a whole number of 1 or more"
          : reversed !== null
            ? reversedRange(index, Number(reversed[1]), Number(reversed[2]), /\/(\d+)/.exec(field)?.[0])
            : outside !== null
              ? `${outside[1]} is outside ${outside[2]}, the ${FIELD_LABELS[index]} values`
              : (parserWordsProblem(index, field, problem) ?? problem);
  return `${FIELD_LABELS[index]} field "${field}": ${said}`;
}

/** Each field's lowest and highest value (day-of-week: 0 and 7 are both Sunday, 0-6 covers a week). */
const FIELD_BOUNDS: ReadonlyArray<readonly [number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
];

/**
 * A range written high to low (`MON-SUN`, read 1-0; `22-2` hours) — cron-parser says only
 * `Invalid range: 1-0, min(1) > max(0)`, with the names turned into numbers the user did not write. A
 * range does not wrap around: said with what to write instead.
 */
function reversedRange(index: number, low: number, high: number, step = ""): string {
  const [min, max] = FIELD_BOUNDS[index] as readonly [number, number];
  const weekDay = index === 4;
  const fix =
    weekDay && high === 0
      ? `${low}-7${step} (Sunday is 0 and 7)`
      : weekDay && low === 7
        ? `0-${high}${step} (Sunday is 0 and 7)`
        : `${low}-${max}${step},${min}-${high}${step}`;
  return `a range goes from its lower value to its higher one (read as ${low}-${high}), it does not wrap around — write that range as ${fix}`;
}

function cronProblem(expression: string): string | undefined {
  // Outside the try: a failure to load cron-parser (a process at its limit on open files) is no invalid
  // expression.
  const cron = parser();
  try {
    cron.parse(expression, { tz: "UTC" });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/**
 * A word in the month or day-of-week field that is no name of that field (`Monday`, `Sept`, `mon` as a
 * month), said with the names to write: cron-parser reads names three letters at a time and answered
 * `cannot resolve alias "day"` or `Invalid characters, got value: 9t`.
 */
function misnamed(index: number, field: string): string | undefined {
  const check =
    index === 3
      ? { names: MONTH_NAMES, other: DAY_NAMES, what: "month", numbers: "1-12" }
      : index === 4
        ? { names: DAY_NAMES, other: MONTH_NAMES, what: "day", numbers: "0-7, 0 and 7 being Sunday" }
        : undefined;
  if (check === undefined) return undefined;
  const { names, other, what, numbers } = check;
  for (const [word] of field.matchAll(/[a-z]+/gi)) {
    const name = word.toLowerCase();
    if (names.includes(name) || (what === "day" && name === "l")) continue;
    if (name === "l") return LAST_DAY_PLACE;
    const elsewhere = other.includes(name)
      ? ` ("${word}" is a ${what === "month" ? "day" : "month"} name: it goes in the ${what === "month" ? "fifth field, day-of-week" : "fourth field, month"})`
      : "";
    return `"${word}" is not a ${what} name — write the first three letters of one (${names.join(", ")}) or a number ${numbers}${elsewhere}`;
  }
  return undefined;
}

const FIELD_NAMES = ["minute", "hour", "dayOfMonth", "month", "dayOfWeek"] as const;

/**
 * cron reads a list as a set of values, so `0 0 * * 0,7` (Sunday as 0 and as 7) or `0,15,30,45,30 * * * *` (30
 * twice) is a valid crontab line; cron-parser refuses a value listed twice. A list that repeats a value is
 * written out as its values, each once; any other field is kept as written.
 */
function withoutRepeats(fields: readonly string[]): string {
  return fields
    .map((field, index) => {
      const items = field.split(",");
      if (items.length < 2) return field;
      const name = FIELD_NAMES[index] as (typeof FIELD_NAMES)[number];
      const values: number[] = [];
      const cron = parser();
      for (const item of items) {
        const probe = fields.map((_other, at) => (at === index ? item : "*")).join(" ");
        let itemValues: readonly (number | string)[];
        try {
          itemValues = cron.parse(probe, { tz: "UTC" }).fields[name].values;
        } catch {
          return field; // the whole expression's parse says what is wrong
        }
        for (const value of itemValues) {
          if (typeof value !== "number") return field; // L, 5L: left to the parser
          values.push(name === "dayOfWeek" && value === 7 ? 0 : value);
        }
      }
      const once = [...new Set(values)].sort((a, b) => a - b);
      return once.length === values.length ? field : once.join(",");
    })
    .join(" ");
}

/** A date and time with no zone (`2026-12-01T09:00`, `2026-12-01 09:00:00`), which JavaScript reads as local time. */
const ZONELESS = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;
/** An ISO 8601 date, or date and time with its zone (`Z`, `+02:00`): read as written. */
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2}))?$/;

/**
 * The time of a job's `next_run` (NaN when it is none). svc writes it in UTC (`...Z`); one written by hand
 * without a zone is UTC too, as schedules are, rather than the gateway's local time (its `TZ`). Only ISO
 * 8601 is a time: JavaScript reads another form (`Dec 2 2026 09:00`, `2026/12/02 09:00`) in the local
 * time zone, so the same file would mean another time on a gateway with another `TZ`.
 */
export function nextRunTime(text: string): number {
  const trimmed = text.trim();
  // The date and time joined by T, as Date.parse reads ISO 8601 (a space or a t sends it to its other forms).
  const iso = trimmed.length > 10 ? `${trimmed.slice(0, 10)}T${trimmed.slice(11)}` : trimmed;
  if (missingDay(trimmed) !== undefined) return Number.NaN;
  if (ZONELESS.test(trimmed)) return Date.parse(`${iso}Z`);
  return ISO_ZONED.test(trimmed) ? Date.parse(iso) : Number.NaN;
}

/** Whether `text`, no time for `nextRunTime`, is one JavaScript would read in another form (in the local time zone). */
export function otherTimeForm(text: string): boolean {
  return (
    Number.isNaN(nextRunTime(text)) && !/^\s*\d+(?:\.\d+)?\s*$/.test(text) && !Number.isNaN(Date.parse(text))
  );
}

/**
 * The first run strictly after `afterMs`. An interval found less than one interval late counts from
 * `dueMs` (the run now due), so `every 1m` keeps its minute instead of drifting by the scheduler's tick
 * at each run; one found later (the gateway was down) continues from now, after its one catch-up run.
 */
export function nextRunAfter(schedule: string, afterMs: number, dueMs?: number): number {
  const parsed = parseSchedule(schedule);
  if (parsed.kind === "interval") {
    const onTime = dueMs !== undefined && dueMs <= afterMs && afterMs - dueMs < parsed.ms;
    return (onTime ? dueMs : afterMs) + parsed.ms;
  }
  const days = bothDaysMatch(parsed.expression);
  if (days !== undefined) return nextOnBothDays(days, afterMs);
  return parser()
    .parse(parsed.expression, { tz: "UTC", currentDate: new Date(afterMs) })
    .next()
    .getTime();
}

/**
 * A cron expression whose minute or hour field starts with `*` (a step over every minute, `0 * * * *`, `@hourly`):
 * after the clock is set back it runs at the times of the new clock, as crontab runs such a job; one at fixed
 * times (`0 12 * * *`, `@daily`) that already ran does not run again when the clock comes round to it.
 */
export function runsOnTheNewClock(expression: string): boolean {
  if (expression.startsWith("@")) return expression === "@hourly";
  const [minute = "", hour = ""] = expression.trim().split(/\s+/);
  return minute.startsWith("*") || hour.startsWith("*");
}

/**
 * How many of `schedule`'s runs came due from `fromMs` (a due time) to `toMs`, both included, counted up to
 * `cap` (a job missed for a long time is said as "cap or more"): what a catch-up run stands for.
 */
export function occurrencesBetween(schedule: string, fromMs: number, toMs: number, cap = 100): number {
  if (!(fromMs <= toMs)) return 0;
  const parsed = parseSchedule(schedule);
  if (parsed.kind === "interval") return Math.min(cap, Math.floor((toMs - fromMs) / parsed.ms) + 1);
  let count = 1;
  for (let at = fromMs; count < cap; count++) {
    at = nextRunAfter(schedule, at);
    if (!(at <= toMs)) break;
  }
  return count;
}

/** A field that is all of its range for cron-parser (only these make the other day field decide alone). */
const isBareStar = (field: string): boolean => field === "*" || field === "?";

/**
 * crontab's day rule: with day-of-month and day-of-week both restricted a day matching either runs, but
 * when one of them starts with `*` (a step over the whole range, every second day) a day must match
 * both — cron (Vixie, cronie) reads "0 9 *\/2 * 1" as 09:00 on odd days that are Mondays. cron-parser takes only a bare `*` as
 * unrestricted, so it ran every odd day and every Monday. Returns the expression split into a
 * day-of-month-only and a day-of-week-only one when this rule applies.
 */
function bothDaysMatch(expression: string): { byMonthDay: string; byWeekDay: string } | undefined {
  const fields = expression.split(/\s+/);
  if (fields.length !== 5) return undefined; // a macro
  const [minute, hour, monthDay, month, weekDay] = fields as [string, string, string, string, string];
  if (isBareStar(monthDay) || isBareStar(weekDay)) return undefined;
  if (!monthDay.startsWith("*") && !weekDay.startsWith("*")) return undefined;
  return {
    byMonthDay: `${minute} ${hour} ${monthDay} ${month} *`,
    byWeekDay: `${minute} ${hour} * ${month} ${weekDay}`,
  };
}

const DAY_MS = 86_400_000;

/** The first run after `afterMs` on a day that both day fields match (at most one look-up per day tried). */
function nextOnBothDays(days: { byMonthDay: string; byWeekDay: string }, afterMs: number): number {
  let from = afterMs;
  // Every (month, day) falls on every weekday within 28 years, so a schedule the parser accepts matches
  // long before this bound; it only keeps a mistake from looping.
  for (let tries = 0; tries < 20_000; tries++) {
    const candidate = parser()
      .parse(days.byMonthDay, { tz: "UTC", currentDate: new Date(from) })
      .next()
      .getTime();
    const onWeekDay = parser()
      .parse(days.byWeekDay, {
        tz: "UTC",
        currentDate: new Date(candidate - 1),
      })
      .next()
      .getTime();
    if (onWeekDay === candidate) return candidate;
    from = Math.floor(candidate / DAY_MS) * DAY_MS + DAY_MS - 1; // the last millisecond of that day
  }
  throw new SvcError("usage", `schedule "${days.byMonthDay}": no day matches both day fields`);
}

/**
 * The latest due time of a schedule at or before `atMs` (the occurrence a catch-up run stands for, the same
 * on every gateway that shares a state). An interval's due times count from a store's own `next_run`
 * (`fromMs`, the one due), every interval on from it: undefined without one, or when it has not come.
 */
export function lastRunAtOrBefore(schedule: string, atMs: number, fromMs?: number): number | undefined {
  const parsed = parseSchedule(schedule);
  if (parsed.kind === "interval") {
    if (fromMs === undefined || !(fromMs <= atMs)) return undefined;
    return fromMs + Math.floor((atMs - fromMs) / parsed.ms) * parsed.ms;
  }
  // `prev()` is strictly before its start: from the next millisecond, a due time at `atMs` is found.
  const prev = (expression: string, beforeMs: number) =>
    parser()
      .parse(expression, { tz: "UTC", currentDate: new Date(beforeMs) })
      .prev()
      .getTime();
  const days = bothDaysMatch(parsed.expression);
  if (days === undefined) return prev(parsed.expression, atMs + 1);
  let before = atMs + 1;
  // As nextOnBothDays, backwards: a day-of-month candidate that falls on a matching weekday.
  for (let tries = 0; tries < 20_000; tries++) {
    const candidate = prev(days.byMonthDay, before);
    if (prev(days.byWeekDay, candidate + 1) === candidate) return candidate;
    before = Math.floor(candidate / DAY_MS) * DAY_MS; // the first millisecond of that day
  }
  return undefined;
}

export const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const JOB_NAME_CHAR = /[A-Za-z0-9._-]/;
export const JOB_NAME_RULE = "use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)";

/** Why `name` cannot be a job name (its length named when that is what is wrong), or undefined. */
export function jobNameProblem(name: string): string | undefined {
  if (JOB_NAME.test(name)) return undefined;
  if (name.length > 64 && JOB_NAME.test(name.slice(0, 64)))
    return `${name.length} characters long — a job name has at most 64: shorten it`;
  return `${JOB_NAME_RULE}${nameCharNote(name, JOB_NAME_CHAR)}`;
}

export function newJobId(): string {
  return randomBytes(4).toString("hex");
}

export type CronStore = VersionedStore<CronJob>;

export function cronStore(path: string): CronStore {
  return createVersionedStore<CronJob>(path, {
    field: "jobs",
    keyedBy: "job id",
    conflictMessage: "the cron job store changed since it was read — run the command again",
    // A chat id written unquoted by hand under deliver_extra (a Discord snowflake) is kept as written.
    extraNumbersAsText: true,
  });
}

/** `meant`: the job name `ref` is a misspelling of, named first. */
export function unknownJob(
  ref: string,
  path: string,
  listCommand = "svc cron list",
  meant?: string,
): SvcError {
  const see = `see \`${listCommand}\` for ids and names`;
  return new SvcError(
    "usage",
    `cron job "${ref}" not found in ${path} — ${meant === undefined ? see : `did you mean ${meant}? (${see})`}`,
  );
}

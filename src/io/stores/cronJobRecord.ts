import { z } from "zod";
import { describe } from "../../config/describe.js";
import { formatJsonIssues } from "../../config/format.js";
import { canonicalTarget, unknownTargetText } from "../targets/names.js";
import { readLastRun } from "./cronLastRun.js";
import { type CronJob, jobNameProblem, otherTimeForm, parseSchedule } from "./cronStore.js";
import { missingDay } from "./missingDay.js";

/**
 * One record of a cron store as the gateway and the commands may use it. `svc cron create` writes valid
 * records; one edited by hand may lack a field or hold a wrong value, and is then reported by its file,
 * key and problem instead of failing later (a `deliver` of "undefined", a crash of `svc cron list`).
 * Absent `deliver`, `deliver_extra` and `state` take the defaults `svc cron create` writes; a `null`
 * value counts as absent; other fields are open (kept as they are).
 */
const cronJobSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string().superRefine((name, ctx) => {
    const problem = jobNameProblem(name);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  }),
  // A schedule the grammar refuses could never advance next_run: the job is not run, and said why.
  schedule: z.string().superRefine((text, ctx) => {
    try {
      parseSchedule(text);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message.replace(/^schedule /, "") });
    }
  }),
  prompt: z.string().refine((text) => text.trim() !== "", "must not be empty — give the text the agent runs"),
  // An unknown target (svc cron create refuses it) failed every run only after its agent had run.
  deliver: z
    .string()
    .min(1)
    .superRefine((target, ctx) => {
      // An empty one is already named by min(1): "unknown target \"\"" would say it twice.
      if (target !== "" && canonicalTarget(target) === undefined)
        ctx.addIssue({ code: "custom", message: unknownTargetText(target) });
    })
    .default("log"),
  // A number or boolean written by hand (chat_id: 42) is its text, as delivery targets read it; a null
  // key is absent, as a null field of the record is.
  deliver_extra: z
    .preprocess(
      (raw) =>
        typeof raw === "object" && raw !== null && !Array.isArray(raw)
          ? Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null))
          : raw,
      z.record(
        z.string(),
        z.union([z.string(), z.number().transform(String), z.boolean().transform(String)], {
          error: "expected text, a number or true/false (sent as written)",
        }),
      ),
    )
    .default({}),
  state: z.enum(["enabled", "paused", "disabled"]).default("enabled"),
  // A number edited in (Unix time) is no time svc reads, and quoted it would be none either: the advice
  // is the ISO time it stands for, in seconds or milliseconds by its size.
  next_run: z
    .unknown()
    .optional()
    .transform((value, ctx): string | undefined => {
      if (value === undefined || typeof value === "string") return value;
      ctx.addIssue({ code: "custom", message: nextRunProblem(value) });
      return z.NEVER;
    }),
  // Written by the gateway after a run, only shown by `svc cron list`: read apart (readLastRun), a broken one
  // is left out with a warning, never making the job invalid.
  last_run: z.unknown().optional(),
  created_at: z
    .union([z.string(), z.number()], { error: "expected an ISO time as text (or a number, epoch)" })
    .optional(),
});

/** What to write instead of a `next_run` that is not text. */
function nextRunProblem(value: unknown): string {
  const leaveOut = "(or leave next_run out: it is set from the schedule)";
  const got = `expected a time as text, got ${describe(value)} — write an ISO 8601 UTC time in quotes`;
  const unix = typeof value === "number" ? unixTimeAdvice(value) : undefined;
  if (unix !== undefined) return `${got}: ${unix} ${leaveOut}`;
  return `${got}, such as "2026-12-02T09:00:00Z" ${leaveOut}`;
}

/**
 * The ISO 8601 UTC time a `next_run` number (or digits in quotes) stands for as Unix time, in seconds or
 * milliseconds by its size: `"2026-12-01T13:20:44.000Z" if 1796131244000 is Unix time in milliseconds`;
 * undefined when it is no such time.
 */
export function unixTimeAdvice(value: number): string | undefined {
  if (!Number.isFinite(value) || value <= 0) return undefined;
  // 1e11 s is the year 5138, 1e11 ms 1973: a smaller number is seconds.
  const [ms, unit] = value >= 1e11 ? [value, "milliseconds"] : [value * 1000, "seconds"];
  const at = new Date(ms);
  return Number.isNaN(at.getTime()) ? undefined : `"${at.toISOString()}" if ${value} is Unix time in ${unit}`;
}

/**
 * What a `next_run` that is not a time adds to its warning: digits in quotes are Unix time copied in, and
 * the advice is the ISO time they stand for; "" for other text.
 */
export function notATimeAdvice(nextRun: string): string {
  const digits = nextRun.trim();
  const unix = /^\d+(?:\.\d+)?$/.test(digits) ? unixTimeAdvice(Number(digits)) : undefined;
  if (unix !== undefined) return ` — write an ISO 8601 UTC time: ${unix}`;
  const missing = missingDay(nextRun);
  if (missing !== undefined) return ` — ${missing}`;
  return otherTimeForm(nextRun)
    ? ` — write an ISO 8601 time, such as "2026-12-02T09:00:00Z" (UTC): another form would be read in the machine's time zone`
    : "";
}

export type JobRecord =
  | {
      readonly ok: true;
      readonly key: string;
      readonly job: CronJob;
      /** What is wrong with the job's `last_run` (left out of `job`), where the file has it: a warning. */
      readonly lastRunProblem?: string;
    }
  | {
      readonly ok: false;
      readonly key: string;
      /** The record's name when it has one, for messages. */
      readonly name: string | undefined;
      readonly problems: readonly string[];
    };

/** Checks the record stored under `key` (its id) of the cron store at `path`. */
export function parseCronJob(path: string, key: string, raw: unknown): JobRecord {
  const record =
    typeof raw === "object" && raw !== null && !Array.isArray(raw)
      ? Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null))
      : raw;
  const name =
    typeof record === "object" && record !== null && typeof (record as { name?: unknown }).name === "string"
      ? ((record as { name: string }).name as string)
      : undefined;
  // The input is reported so a wrong value reads "expected a string, got 5", not "missing".
  const parsed = cronJobSchema.safeParse(record, { reportInput: true });
  const problems: string[] = [];
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ["jobs", key, ...issue.path] }));
    problems.push(...formatJsonIssues(path, issues).split("\n"));
  } else if (key === "__proto__") {
    // `jobs[key] = ...` would set the prototype of the records instead: the job's runs would be lost.
    problems.push(
      `${path}: jobs.__proto__: "__proto__" cannot be used as an id (JavaScript reserves it) — rename it`,
    );
  } else if (parsed.data.id !== undefined && parsed.data.id !== key) {
    // Commands write a job back under its id: a different key would leave a second copy.
    problems.push(
      `${path}: jobs.${key}.id: ${JSON.stringify(parsed.data.id)} is not the key the job is stored under — make them the same`,
    );
  }
  if (!parsed.success || problems.length > 0) return { ok: false, key, name, problems };
  const { last_run, ...rest } = parsed.data;
  const { lastRun, problem } = readLastRun(path, key, rest.name, last_run);
  const job = { ...rest, id: key, ...(lastRun === undefined ? {} : { last_run: lastRun }) } as CronJob;
  return { ok: true, key, job, ...(problem === undefined ? {} : { lastRunProblem: problem }) };
}

/** Every record of a store, checked, in the file's order. */
export function jobRecords(path: string, records: Readonly<Record<string, unknown>>): JobRecord[] {
  return Object.entries(records).map(([key, raw]) => parseCronJob(path, key, raw));
}

/** The names of the jobs among a store's records (records without a name, edited by hand, left out). */
export function jobNamesIn(records: Readonly<Record<string, unknown>>): string[] {
  return Object.values(records).flatMap((raw) => {
    const name = typeof raw === "object" && raw !== null ? (raw as { name?: unknown }).name : undefined;
    return typeof name === "string" ? [name] : [];
  });
}

/** The ids (keys) of the records named `name`, in file order: more than one only in a store edited by hand. */
export function jobsNamed(records: Readonly<Record<string, unknown>>, name: string): string[] {
  return Object.entries(records).flatMap(([key, raw]) =>
    typeof raw === "object" && raw !== null && (raw as { name?: unknown }).name === name ? [key] : [],
  );
}

/**
 * The record a command or a `cron_job` route names: by id (its key), else by name; an invalid record
 * found either way is returned with its problems. Own keys only (`constructor` is an unknown job).
 */
export function lookupJob(
  path: string,
  records: Readonly<Record<string, unknown>>,
  ref: string,
): JobRecord | undefined {
  if (Object.hasOwn(records, ref)) return parseCronJob(path, ref, records[ref]);
  // Only the record of that name is checked: a cron_job route looks its job up on every event.
  const named = Object.entries(records).find(
    ([, raw]) => typeof raw === "object" && raw !== null && (raw as { name?: unknown }).name === ref,
  );
  return named === undefined ? undefined : parseCronJob(path, named[0], named[1]);
}

/**
 * How a command names job `key` (named `name`) so that it acts on that job: by its name, unless the name
 * finds another job (a copy of it first in the file, in a store edited by hand) — by its id then.
 */
export function jobRef(
  path: string,
  records: Readonly<Record<string, unknown>>,
  key: string,
  name: string,
): string {
  return lookupJob(path, records, name)?.key === key ? name : key;
}

/** `lookupJob` among records checked already (`jobRecords`): by id, else by name, the first in the file. */
export function findJob(records: readonly JobRecord[], ref: string): JobRecord | undefined {
  return (
    records.find((record) => record.key === ref) ??
    records.find((record) => (record.ok ? record.job.name : record.name) === ref)
  );
}

/** What to do about an invalid record: the file, key and problem, and the two ways out. */
export function invalidJobMessage(record: Extract<JobRecord, { ok: false }>, removeCommand: string): string {
  return `${record.problems.join("; ")} — fix the job in the file, or remove it (${removeCommand} ${record.key})`;
}

import { join } from "node:path";
import type { Command } from "commander";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import { nearMiss } from "../config/nearMiss.js";
import { DEFAULT_PROFILE, inProfile, profileFlag, svcHome, svcPaths } from "../config/paths.js";
import type { Route } from "../config/schema.js";
import { serverEntries } from "../config/serverOrder.js";
import { webhookSecretValues } from "../config/webhookSecrets.js";
import { describeError, SvcError } from "../errors.js";
import { leaveGoneDirectory } from "../io/goneDirectory.js";
import { loadedCredentials } from "../io/loadedCredentials.js";
import { profilesOnDisk } from "../io/profiles.js";
import { storeProblem } from "../io/stores/atomicFile.js";
import {
  invalidJobMessage,
  type JobRecord,
  jobNamesIn,
  jobRecords,
  jobRef,
  jobsNamed,
  lookupJob,
  notATimeAdvice,
} from "../io/stores/cronJobRecord.js";
import {
  type CronJob,
  type CronJobState,
  type CronStore,
  capitalMinutesNote,
  cronStore,
  jobNameProblem,
  newJobId,
  nextRunAfter,
  nextRunTime,
  parseSchedule,
  SCHEDULE_MACROS_TEXT,
  unknownJob,
} from "../io/stores/cronStore.js";
import { profilesWithJob, profilesWithJobs } from "../io/stores/profilesWithJob.js";
import { parseSubscription, type Subscription } from "../io/stores/subscriptions.js";
import { unusableCronStore } from "../io/stores/unusableCronStore.js";
import { canonicalTarget, unknownTargetText } from "../io/targets/names.js";
import { targetStartupProblems } from "../io/targets/validate.js";
import { terminalText } from "../io/terminalText.js";
import { checkDeliverExtra, collectPairs, formatTable } from "./format.js";
import { notingOverEmptied } from "./overEmptiedStore.js";
import { requireOptions } from "./requiredOptions.js";
import { subscriptionSecrets } from "./subscriptionSecrets.js";
import { unquotedValueError } from "./unquotedValue.js";
import { withSubscriptionStore } from "./webhook/subscriptionStoreFor.js";

/** `--profile <name>`: which profile's cron store a command works on (the default profile without it). */
interface ProfileOption {
  profile?: string;
}

/**
 * The profile's cron store. A `profiles/<name>`, or the profile's `cron` directory (the default profile's too),
 * that is a link to nothing or a file is refused, named with its link target and what to do: the write failed
 * with a raw `ENOTDIR ... mkdir` (`ENOENT` for `cron`), or made the directory a moved link pointed to, and a read
 * found no jobs.
 */
function store(options: ProfileOption) {
  const unusable = unusableCronStore(svcHome(), options.profile);
  if (unusable !== undefined) throw new SvcError("usage", unusable);
  return notingOverEmptied(cronStore(svcPaths(svcHome(), options.profile).cronJobs), "cron jobs");
}

function notFound(ref: string, path: string, options: ProfileOption): SvcError {
  const listCommand = `svc cron list${profileFlag(options.profile)}`;
  const typo = newProfileTypo(options.profile);
  if (typo !== undefined)
    return new SvcError(
      "usage",
      `${unknownJob(ref, path, listCommand).message} (profile ${options.profile} has no directory — did you mean ${typo}? ${typo === DEFAULT_PROFILE ? "leave --profile out" : `--profile ${typo}`})`,
    );
  // The job of another profile (`--profile work` left out, or given where the job is the default's): said
  // before a job of a near name here, since the job named exists.
  const elsewhere = profilesWithJob(svcHome(), ref, options.profile ?? DEFAULT_PROFILE)[0];
  if (elsewhere !== undefined) {
    const flag =
      elsewhere === DEFAULT_PROFILE
        ? "the default profile: leave --profile out"
        : `profile ${elsewhere}: add --profile ${elsewhere}`;
    return new SvcError("usage", `cron job "${ref}" not found in ${path} — it is a job of ${flag}`);
  }
  // A job's name misspelt (`nightyl`): the one meant is named.
  return unknownJob(ref, path, listCommand, nearMiss(ref, jobNames(path)));
}

/** The names of the jobs in the store at `path` (none when it cannot be read: the message goes without). */
function jobNames(path: string): string[] {
  try {
    return jobNamesIn(cronStore(path).read().records);
  } catch {
    return [];
  }
}

/**
 * An unknown job is refused before the store's lock is taken: the lock file makes the profile's
 * directory, so a `--profile wrok` typo left a new profile behind, which later commands then took as
 * real (`svc cron create --profile wrok` no longer asked "did you mean work?").
 */
function refuseUnknown(jobs: CronStore, ref: string, options: ProfileOption): void {
  if (lookupJob(jobs.path, jobs.read().records, ref) === undefined) throw notFound(ref, jobs.path, options);
}

/** The valid job `ref` names; an unknown one, or a record edited by hand into an invalid one, is refused. */
function usableJob(found: JobRecord | undefined, ref: string, path: string, options: ProfileOption): CronJob {
  if (found === undefined) throw notFound(ref, path, options);
  if (!found.ok)
    throw new SvcError(
      "store_corrupt",
      invalidJobMessage(found, `svc cron remove${profileFlag(options.profile)}`),
    );
  return found.job;
}

interface CreateOptions extends ProfileOption {
  name: string;
  schedule: string;
  prompt: string;
  deliver?: string;
  deliverExtra?: Record<string, string>;
}

async function create(options: CreateOptions): Promise<void> {
  const nameProblem = jobNameProblem(options.name);
  if (nameProblem !== undefined) throw new SvcError("usage", `--name "${options.name}": ${nameProblem}`);
  parseSchedule(options.schedule);
  // An empty prompt gives the agent nothing to do on every run.
  if (options.prompt.trim() === "")
    throw new SvcError("usage", "--prompt: must not be empty — give the text the agent runs");
  // Every run would fail on a blank recipient: refused as `svc webhook subscribe --deliver-extra` refuses it.
  checkDeliverExtra(options.deliverExtra, false);
  // Every run would otherwise fail on it: refused here as `svc webhook subscribe --deliver` does.
  if (options.deliver !== undefined && canonicalTarget(options.deliver) === undefined) {
    // As a route's deliver and svc webhook subscribe --deliver say it: `slak` → "slack", `Telegram` → "telegram".
    throw new SvcError("usage", `--deliver: ${unknownTargetText(options.deliver)}`);
  }
  const jobs = store(options);
  // Before the write, which makes the profile's directory: `--profile wrok` would otherwise start a new profile.
  const typo = newProfileTypo(options.profile);
  const now = Date.now();
  const job: CronJob = {
    id: newJobId(),
    name: options.name,
    schedule: options.schedule.trim(),
    prompt: options.prompt,
    deliver: options.deliver ?? "log",
    deliver_extra: options.deliverExtra ?? {},
    state: "enabled",
    next_run: new Date(nextRunAfter(options.schedule, now)).toISOString(),
    created_at: new Date(now).toISOString(),
  };
  await jobs.update((records) => {
    if (Object.values(records).some((other) => other?.name === job.name)) {
      throw new SvcError(
        "usage",
        `a cron job named "${job.name}" already exists — choose another --name or remove it first`,
      );
    }
    // Commands and cron_job routes look a job up by id first: this name would reach the other job.
    // Own keys only: `constructor` is a free name, not Object.prototype's member.
    const byId = Object.hasOwn(records, job.name) ? lookupJob(jobs.path, records, job.name) : undefined;
    if (byId !== undefined) {
      const other = byId.ok ? byId.job.name : byId.name;
      throw new SvcError(
        "usage",
        `--name ${job.name}: that is the id of ${other === undefined ? "a record" : `cron job "${other}"`}, which commands and cron_job routes would find instead — choose another --name`,
      );
    }
    records[job.id] = job;
  });
  process.stdout.write(
    `Created cron job ${job.id} (${job.name})${inProfile(options.profile)}, schedule "${job.schedule}", next run ${job.next_run}\n`,
  );
  if (typo !== undefined)
    process.stderr.write(
      `Warning: profile ${options.profile} had no directory (${svcPaths(svcHome(), options.profile).root} is new) — did you mean ${typo}? The job runs in profile ${options.profile}, with its skills, .env and MCP tokens; to move it: svc cron remove ${job.name}${profileFlag(options.profile)}, then create it again ${typo === DEFAULT_PROFILE ? "without --profile" : `with --profile ${typo}`}\n`,
    );
  const minutes = capitalMinutesNote(job.schedule);
  if (minutes !== undefined) process.stderr.write(`Warning: ${minutes}\n`);
  warnAboutTarget(job, options.profile);
  noteSharedState(jobs.path);
}

/** Whether config.yaml names `state.backend: redis` (false when it does not load: the gateway reports that). */
function sharedState(): boolean {
  try {
    return loadConfig().config.state.backend === "redis";
  } catch {
    return false;
  }
}

/**
 * With `state.backend: redis` the instances share their runs, not their cron stores: each runs the jobs of
 * its own home's store, and a due time's lease names the job by its id, drawn at random in each store. So
 * every change is said to need copying, or a job created in each home separately runs once per instance.
 */
function noteSharedState(path: string): void {
  if (sharedState())
    process.stderr.write(
      `Note: with state.backend: redis every gateway instance runs the jobs of its own home's cron store — copy ${path} to the same place in each instance's home after this change (a job created separately in each home has another id there, and runs once per instance)\n`,
    );
}

/** The profile that `profile`, a name with no directory yet, is one or two letters from (`wrok` → `work`). */
function newProfileTypo(profile: string | undefined): string | undefined {
  if (profile === undefined) return undefined;
  const profiles = profilesOnDisk(svcHome());
  return profiles.includes(profile) ? undefined : nearMiss(profile, profiles);
}

/**
 * A target whose platform is not enabled, or that lacks a recipient, is accepted (it may be set up
 * before the first run) but said, as `svc webhook subscribe` does: until then every run fails.
 */
function warnAboutTarget(job: CronJob, profile: string | undefined): void {
  if (canonicalTarget(job.deliver) === "log") {
    // As svc webhook subscribe says of the same flag: the log target reads no key.
    if (Object.keys(job.deliver_extra).length > 0)
      process.stderr.write(
        `Warning: --deliver-extra has no effect while the job delivers to log (replies go to the gateway log) — to deliver elsewhere: svc cron remove ${job.name}${profileFlag(profile)}, then create it again with --deliver <target>, e.g. --deliver telegram\n`,
      );
    return;
  }
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig();
  } catch (err) {
    // The job is stored all the same: the gateway and svc cron run refuse the file, svc config check says why.
    warnConfigNotLoaded(err, `the job's target (${job.deliver})`);
    return;
  }
  const { config, paths } = loaded;
  const route = { deliver: job.deliver, deliver_extra: job.deliver_extra } as Route;
  const webhook = { ...config.platforms.webhook, routes: { [job.name]: route } };
  const { notEnabled, warnings } = targetStartupProblems(
    { ...config, platforms: { ...config.platforms, webhook } },
    paths.config,
    { templates: false },
  );
  const at = `${paths.config}: platforms.webhook.routes.${job.name}.`;
  for (const problem of [...notEnabled, ...warnings])
    process.stderr.write(
      `Warning: ${terminalText(problem.startsWith(at) ? problem.slice(at.length) : problem)}\n`,
    );
  if (warnings.some((problem) => problem.includes(".deliver_extra.")))
    process.stderr.write(
      `Set deliver_extra keys with --deliver-extra <key>=<value>: svc cron remove ${job.name}${profileFlag(profile)}, then create it again\n`,
    );
}

function list(options: ProfileOption): void {
  const jobs = store(options);
  const stored = jobs.read().records;
  const records = jobRecords(jobs.path, stored);
  if (records.length === 0) {
    // `--profile wrok` with a profile work on disk: the list is empty because the name is a typo.
    const typo = newProfileTypo(options.profile);
    if (typo !== undefined) {
      process.stdout.write(
        `No cron jobs in profile ${options.profile}, which has no directory — did you mean ${typo}? svc cron list${profileFlag(typo)}\n`,
      );
      return;
    }
    process.stdout.write(
      `No cron jobs. Create one: svc cron create${profileFlag(options.profile)} --name <name> --schedule "every 1h" --prompt <text>\n`,
    );
    // The jobs are another profile's (`--profile work` left out, or given where they are the default's).
    const others = profilesWithJobs(svcHome(), options.profile ?? DEFAULT_PROFILE);
    const first = others[0];
    if (first !== undefined)
      process.stdout.write(
        `Jobs of other profiles: ${others.map(({ profile, count }) => `${profile === DEFAULT_PROFILE ? "the default profile" : profile} (${count})`).join(", ")} — svc cron list${profileFlag(first.profile)}\n`,
      );
    return;
  }
  // A record edited by hand into an invalid one is listed as invalid; its problem goes to stderr.
  const rows = records
    .map((record) =>
      record.ok
        ? [
            record.key,
            record.job.name,
            record.job.schedule,
            record.job.state,
            record.job.state === "enabled" ? nextRunShown(record.job.next_run) : "-",
            record.job.last_run === undefined
              ? "never"
              : `${record.job.last_run.at} ${record.job.last_run.status}`,
          ]
        : [record.key, record.name ?? "-", "-", "invalid", "-", "-"],
    )
    .sort((a, b) => (a[1] as string).localeCompare(b[1] as string));
  process.stdout.write(
    `${formatTable([["ID", "NAME", "SCHEDULE", "STATE", "NEXT RUN", "LAST RUN"], ...rows])}\n`,
  );
  if (sharedState())
    process.stderr.write(
      "Note: with state.backend: redis LAST RUN is the last run the gateway of this home made; the other instances record theirs in the cron stores of their own homes (a job's runs go to whichever instance claims each due time)\n",
    );
  // Names are unique as svc cron create makes them; a job copied in the file by hand keeps its name.
  for (const name of new Set(jobNamesIn(stored))) {
    const namesakes = jobsNamed(stored, name);
    if (namesakes.length > 1)
      process.stderr.write(
        `Warning: ${terminalText(`${namesakes.length} jobs in ${jobs.path} are named ${name} (${namesakes.join(", ")}): svc cron commands and cron_job routes that name ${name} act on the first, ${namesakes[0]} — job names are unique: rename the others in the file`)}\n`,
      );
  }
  for (const record of records) {
    if (!record.ok)
      process.stderr.write(
        `Warning: ${terminalText(invalidJobMessage(record, `svc cron remove${profileFlag(options.profile)}`))}\n`,
      );
    else if (record.lastRunProblem !== undefined)
      process.stderr.write(`Warning: ${terminalText(record.lastRunProblem)}\n`);
    // LAST RUN reads "error" (or "interrupted"); why is in jobs.json and the log, so it is said here.
    else if (record.job.last_run !== undefined && record.job.last_run.status !== "ok") {
      const { at, status, trigger, error } = record.job.last_run;
      process.stderr.write(
        terminalText(
          `Note: ${record.job.name}'s last run (${at}, ${trigger}) ${status === "interrupted" ? "was interrupted" : "failed"}${error === undefined ? "" : `: ${error}`}`,
        ) + "\n",
      );
    }
    // The gateway sets such a next_run from the schedule at its next check; until then it is listed as written.
    if (
      record.ok &&
      record.job.state === "enabled" &&
      record.job.next_run !== undefined &&
      Number.isNaN(nextRunTime(record.job.next_run))
    )
      process.stderr.write(
        `Warning: ${terminalText(`${record.job.name} (${record.key}): next_run ${JSON.stringify(record.job.next_run.slice(0, 40))} in ${jobs.path} is not a time; a running gateway sets it from the schedule at its next check${notATimeAdvice(record.job.next_run)}`)}\n`,
      );
  }
}

/**
 * A job's next run as `svc cron list` shows it: in UTC, as svc writes it, also when written by hand without
 * a zone (`2026-12-02 09:00`, UTC, which the eye reads as local time) or in another one; text that is no time
 * as written (a warning names it).
 */
function nextRunShown(nextRun: string | undefined): string {
  if (nextRun === undefined) return "-";
  const at = nextRunTime(nextRun);
  return Number.isNaN(at) ? nextRun : new Date(at).toISOString();
}

/**
 * A job after `svc cron pause|resume|disable`. Resuming a paused or disabled job schedules it from now; a
 * job that is enabled already keeps its next run, so a second `resume` does not move an `every 1d` job's
 * time of day to the moment it was typed. `changed` is false when the job already had that state.
 */
export function withState(
  job: CronJob,
  state: CronJobState,
  nowMs: number,
): { job: CronJob; changed: boolean } {
  const changed = job.state !== state;
  const { next_run: old, ...rest } = job;
  if (state !== "enabled") return { job: { ...rest, state }, changed };
  const kept = !changed && old !== undefined && Number.isFinite(nextRunTime(old)) ? old : undefined;
  const next_run = kept ?? new Date(nextRunAfter(job.schedule, nowMs)).toISOString();
  return { job: { ...rest, state, next_run }, changed };
}

async function setState(ref: string, state: CronJobState, options: ProfileOption): Promise<void> {
  const jobs = store(options);
  refuseUnknown(jobs, ref, options);
  const { result } = await jobs.update((records) => {
    const found = usableJob(lookupJob(jobs.path, records, ref), ref, jobs.path, options);
    const before = { ...records };
    const next = withState(found, state, Date.now());
    records[found.id] = next.job;
    return { ...next, change: { path: jobs.path, before, after: { ...records } } };
  });
  const { job, changed, change } = result;
  const when = job.next_run === undefined ? "" : `; next run ${job.next_run}`;
  process.stdout.write(
    `Cron job ${job.id} (${job.name})${inProfile(options.profile)} is ${changed ? "now" : "already"} ${state}${when}\n`,
  );
  if (changed && state !== "enabled") await warnFiringRoutes(job, change, options.profile);
  if (changed) noteSharedState(jobs.path);
}

/**
 * A job paused or disabled is not fired by the webhook routes that name it: their events are still
 * answered 202 and dropped (spec 3.2), so the routes are named as `remove` names them. A route naming
 * another job of the same name (the first in the file) is not one of them.
 */
async function warnFiringRoutes(
  job: CronJob,
  change: StoreChange,
  profile: string | undefined,
): Promise<void> {
  // By its name, unless that names another job (a copy of it first in the file): by its id then.
  const ref = jobRef(change.path, change.after, job.id, job.name);
  const resume = `svc cron resume ${ref}${profileFlag(profile)}`;
  const { names: firing, unchecked } = await routesFiring(job, change, profile);
  if (unchecked !== undefined)
    process.stderr.write(
      `Warning: the dynamic subscriptions were not checked for one that fires this job (cron_job): ${unchecked}; one that does drops its events until ${resume}\n`,
    );
  if (firing.length > 0)
    process.stderr.write(
      `Warning: ${firing.join(", ")} ${firing.length === 1 ? "fires" : "fire"} this job (cron_job): ${firing.length === 1 ? "its" : "their"} events are now logged and dropped without a run (still answered 202 accepted) until ${resume}\n`,
    );
}

async function remove(ref: string, options: ProfileOption): Promise<void> {
  const jobs = store(options);
  refuseUnknown(jobs, ref, options);
  const { result } = await jobs.update((records) => {
    // An invalid record (edited by hand) can be removed too: that is one of the ways out it is shown.
    const found = lookupJob(jobs.path, records, ref);
    if (found === undefined) throw notFound(ref, jobs.path, options);
    const before = { ...records };
    delete records[found.key];
    return {
      id: found.key,
      name: found.ok ? found.job.name : found.name,
      change: { path: jobs.path, before, after: { ...records } },
    };
  });
  // An invalid record's name is as it was written by hand: shown as text, never acted on (as list shows it).
  process.stdout.write(
    `${terminalText(`Removed cron job ${result.id}${result.name === undefined ? "" : ` (${result.name})`}${inProfile(options.profile)}`)}\n`,
  );
  const { names: firing, others, unchecked } = await routesFiring(result, result.change, options.profile);
  if (unchecked !== undefined)
    process.stderr.write(
      `Warning: the dynamic subscriptions were not checked for one that fires this job (cron_job): ${unchecked}; svc webhook list shows them once they can be read, and svc webhook subscribe <name> --no-cron-job changes one that does\n`,
    );
  if (firing.length > 0)
    process.stderr.write(
      `${terminalText(`Warning: ${firing.join(", ")} ${firing.length === 1 ? "fires" : "fire"} this job (cron_job): ${firing.length === 1 ? "its" : "their"} events are now logged and dropped until the job they name exists again${inProfile(options.profile)} (svc cron create${profileFlag(options.profile)} --name ${result.name ?? "<name>"} ...; a route naming it by id needs the new id), or the route changes (${changeHint(firing)})`)}\n`,
    );
  // Routes that named it by a name another job has too: they fire that one now, which drops their events.
  for (const { names, job: now } of others)
    process.stderr.write(
      `${terminalText(`Warning: ${names.join(", ")} fired this job (cron_job) by its name, ${result.name}, which now names job ${now.key} (${now.ok ? now.job.state : `invalid: ${now.problems.join("; ")}`}): ${names.length === 1 ? "its" : "their"} events are now logged and dropped without a run (still answered 202 accepted) until ${now.ok ? `svc cron resume ${now.key}${profileFlag(options.profile)}` : `the job is fixed in the file, or removed (svc cron remove${profileFlag(options.profile)} ${now.key})`}`)}\n`,
    );
  noteSharedState(jobs.path);
}

/**
 * The one line for a check config.yaml was needed for, skipped because the file does not load (`what`
 * names the check): its first problem without the advice, which svc config check gives with the rest.
 */
function warnConfigNotLoaded(err: unknown, what: string): void {
  const file = svcPaths(svcHome()).config;
  const [first = "", ...rest] = describeError(err).split("\n");
  const problem = (first.startsWith(`${file}: `) ? first.slice(file.length + 2) : first).split(" — ")[0];
  const more = rest.filter((line) => line.startsWith(`${file}: `)).length;
  process.stderr.write(
    `${terminalText(`Warning: ${file} could not be loaded (${problem}${more === 0 ? "" : `, and ${more} more problem${more === 1 ? "" : "s"}`}): ${what} was not checked`)}\n`,
  );
}

/** How each kind of route that fires the job stops naming it: config.yaml routes are edited there. */
function changeHint(firing: readonly string[]): string {
  const hints: string[] = [];
  if (firing.some((name) => name.endsWith("(config.yaml)")))
    hints.push("edit platforms.webhook.routes.<name>.cron_job in config.yaml");
  if (firing.some((name) => name.startsWith("subscription ")))
    hints.push("svc webhook subscribe <name> --no-cron-job");
  return hints.join("; ");
}

/** A command's change to a cron store: its records before and after it, as written. */
interface StoreChange {
  readonly path: string;
  readonly before: Readonly<Record<string, unknown>>;
  readonly after: Readonly<Record<string, unknown>>;
}

/**
 * Webhook routes of `profile` (static and dynamic) that fired this job and, after `change`, drop their
 * events: their cron_job resolved to the job before the change (by id, or by name: the first job of that
 * name in the file), and now resolves to nothing, to a job paused or disabled, or to an invalid record.
 * `names`: those whose reference now finds nothing or this job itself; `others`: those a name shared with
 * another job (copied by hand) now takes to that one, by job. A route that now fires an enabled job of the
 * name is not named. Dynamic ones come from the store the gateway serves: the subscriptions file, or Redis
 * with `state.backend: redis`; `unchecked` says why that store could not be read (an unreachable Redis), so
 * none of them was looked at. A config.yaml that does not load leaves none looked at: a warning says so.
 */
async function routesFiring(
  job: { id: string },
  change: StoreChange,
  profile: string | undefined,
): Promise<{ names: string[]; others: { names: string[]; job: JobRecord }[]; unchecked?: string }> {
  const others = new Map<string, { names: string[]; job: JobRecord }>();
  const names: string[] = [];
  /** Files `name` under where the route's events now go, when it fired this job and now drops them. */
  const sort = (route: Route | Subscription, name: string) => {
    if ((route.profile ?? DEFAULT_PROFILE) !== (profile ?? DEFAULT_PROFILE) || route.cron_job === undefined)
      return;
    if (lookupJob(change.path, change.before, route.cron_job)?.key !== job.id) return;
    const now = lookupJob(change.path, change.after, route.cron_job);
    if (now?.ok === true && now.job.state === "enabled") return;
    if (now === undefined || now.key === job.id) names.push(name);
    else {
      const entry = others.get(now.key) ?? { names: [], job: now };
      entry.names.push(name);
      others.set(now.key, entry);
    }
  };
  const done = (unchecked?: string) => ({
    names,
    others: [...others.values()],
    ...(unchecked === undefined ? {} : { unchecked }),
  });
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig();
  } catch (err) {
    // Its routes, and which store holds the subscriptions, are unknown; the job is changed all the same.
    warnConfigNotLoaded(
      err,
      "whether a webhook route (config.yaml's or a subscription) fires this job (cron_job)",
    );
    return done();
  }
  for (const [name, route] of Object.entries(loaded.config.platforms.webhook.routes))
    sort(route, `route ${name} (config.yaml)`);
  let store: { path: string; records: Record<string, unknown> } | undefined;
  try {
    store = await withSubscriptionStore(loaded, async (subscriptions) => ({
      path: subscriptions.path,
      records: (await subscriptions.read()).records,
    }));
  } catch (err) {
    // The job is removed all the same: the warning says that the subscriptions were not looked at.
    return done(err instanceof Error ? err.message : String(err));
  }
  for (const [name, raw] of Object.entries(store?.records ?? {})) {
    const parsed = parseSubscription(store?.path ?? loaded.paths.subscriptions, name, raw);
    if (parsed.ok && parsed.value.enabled) sort(parsed.value, `subscription ${name}`);
  }
  return done();
}

/** Runs the job once in this process with the configured agent and target, and prints the reply. */
async function runNow(ref: string, options: ProfileOption): Promise<void> {
  const loaded = loadConfig();
  // The agent command starts where the gateway's would, also when the working directory is gone.
  leaveGoneDirectory(loaded.paths.home);
  const jobs = store(options);
  const job = usableJob(lookupJob(jobs.path, jobs.read().records, ref), ref, jobs.path, options);
  // The agent, the delivery platforms and the scheduler load only for a run, not for list or create.
  const [
    { createRunner },
    { runCronJob },
    { createDeliverer },
    { createLogger },
    { createTargets },
    { createMcpEndpointHost },
    { mcpToolsOutsideGateway },
    { listenForInterrupt, raiseAgain },
    { processGroupFiles },
    { agentGroupsDir },
  ] = await Promise.all([
    import("../actors/agent/index.js"),
    import("../actors/cron.js"),
    import("../actors/deliver.js"),
    import("../io/log.js"),
    import("../io/targets/registry.js"),
    import("../agent/mcpEndpoint/index.js"),
    import("../agent/mcpOutsideGateway.js"),
    import("./interrupt.js"),
    import("../io/processGroups.js"),
    import("../state/gatewayState.js"),
  ]);
  // Every stored subscription's secret, a disabled one's too (from Redis with state.backend: redis).
  const subscriptions = await subscriptionSecrets(loaded);
  const logger = createLogger({ file: loaded.paths.gatewayLog, stdout: false });
  const deliverer = createDeliverer({
    targets: createTargets(loaded.config, { logger }),
    logger,
    paths: loaded.paths,
  });
  // Where the reply went, said after it (stdout stays the reply alone, for `svc cron run digest > reply.md`):
  // a first run's user otherwise learns only from the mailbox or chat that it was delivered.
  let deliveredTo: string | undefined;
  const delivering: typeof deliverer = {
    ...deliverer,
    deliver: async (request, signal) => {
      const receipt = await deliverer.deliver(request, signal);
      const target = canonicalTarget(request.target) ?? request.target;
      deliveredTo =
        target === "log"
          ? undefined
          : `${target}${receipt.chatId === undefined ? "" : ` (${receipt.chatId})`}`;
      return receipt;
    },
  };
  let status: "ok" | "error" = "ok";
  let error: string | undefined;
  // The run gets the built-in tools as in the gateway (no MCP connections here): with the tools: settings,
  // a workspace, and for a command agent the loopback MCP endpoint serving them (opened on first use).
  const endpoint = createMcpEndpointHost({ fileMaxBytes: () => loaded.config.tools.file.max_bytes });
  const credentials = Object.freeze(loadedCredentials(loaded.config, loaded.scope));
  const runner = createRunner(loaded.config.agent, {
    logger,
    toolSettings: loaded.config.tools,
    workspacesDir: join(loaded.paths.home, "workspaces"),
    mcpEndpoint: endpoint,
    // A call to an MCP server's tool is told why it is not offered here, and where the job gets them.
    noMcpHub: mcpToolsOutsideGateway(
      serverEntries(loaded.config.mcp_servers).flatMap(([name, entry]) => (entry.enabled ? [name] : [])),
    ),
    hiddenValues: () => [...webhookSecretValues(loaded.config), ...subscriptions],
    dotenv: loaded.scope.secrets,
    credentials: () => credentials,
    // Noted as the gateway notes its agents: this command killed (SIGKILL, an OOM kill) leaves the agent's
    // group running, which the gateway's next start then stops (the run is not run again).
    groups: processGroupFiles(agentGroupsDir(loaded.paths.home)),
  });
  // Ctrl-C stops the run: the agent leads a process group of its own (the gateway stops it whole), which
  // the terminal's signal does not reach, so without this it ran on, orphaned, after the command ended.
  // The run is waited for (its agent stopped as the gateway stops one: SIGTERM, SIGKILL 2 s later); a second
  // Ctrl-C ends the command at once.
  const interrupt = listenForInterrupt(`the run of cron job ${job.name}`);
  // On a terminal the reply (which may quote a web page or an issue) is shown as other text svc did not write
  // is, so an escape sequence in it cannot clear the screen or a bidi override reorder it; piped, it is as is.
  const print = (reply: string) => {
    const shown = process.stdout.isTTY === true ? terminalText(reply) : reply;
    process.stdout.write(`${shown}${shown.endsWith("\n") ? "" : "\n"}`);
  };
  // The agent's reply, kept when its delivery fails: printed all the same, so the run (a model's tokens)
  // is not lost with it. Not a failed run's notice, which is no reply.
  let answered: string | undefined;
  const answering: typeof runner = {
    run: async (request, signal) => {
      const reply = await runner.run(request, signal);
      answered = reply.text;
      return reply;
    },
  };
  try {
    print(
      await runCronJob(
        { runner: answering, deliverer: delivering },
        job,
        job.prompt,
        "manual",
        options.profile,
        interrupt.signal,
      ),
    );
    if (deliveredTo !== undefined) process.stderr.write(`${terminalText(`Delivered to ${deliveredTo}.`)}\n`);
  } catch (err) {
    status = "error";
    if (interrupt.signal.aborted) {
      error = (interrupt.signal.reason as Error).message;
      process.stderr.write(`svc: ${error}\n`);
    } else {
      error = (err as Error)?.message ?? String(err);
      if (answered !== undefined) print(answered);
      throw new SvcError("agent_failed", `cron job ${job.name}: run failed — ${error}`);
    }
  } finally {
    await endpoint.close();
    const at = new Date().toISOString();
    try {
      await jobs.update((records) => {
        const current = records[job.id];
        if (current !== undefined)
          records[job.id] = {
            ...current,
            last_run: { at, status, trigger: "manual", ...(error === undefined ? {} : { error }) },
          };
      });
    } catch (err) {
      // The run is over (and delivered): its store's "run the command again" would run it a second time,
      // and a failed run's own error is what the command ends with.
      process.stderr.write(
        `Warning: the run of cron job ${job.name} ended (${status}), but its last_run could not be recorded: ${storeProblem(err)} (svc cron list shows the last run recorded before)\n`,
      );
    }
    const signal = interrupt.dispose();
    // Ends as the signal would have (exit status 130 for Ctrl-C in a shell).
    if (signal !== undefined) raiseAgain(signal);
  }
}

/** `svc cron ...` */
/** What `svc cron create` shows in quotes for a value given as several words (`--schedule 0 9 * * 1-5`). */
const CREATE_EXAMPLES: Readonly<Record<string, string>> = {
  "--schedule": '"0 9 * * 1-5"',
  "--prompt": '"Summarize the open pull requests"',
};
/** The options whose stray words the refusal shows (a schedule holds no secret; a prompt may). */
const SHOWN_VALUES: ReadonlySet<string> = new Set(["--schedule"]);

export function registerCronCommands(program: Command): void {
  const cron = program
    .command("cron")
    .description("scheduled agent jobs (also fired by cron_job webhook routes)");
  const createCommand = cron
    .command("create")
    .description("create a job")
    .option("--name <name>", "unique name")
    .option(
      "--schedule <expr>",
      `cron expression (5 fields, UTC), a macro (${SCHEDULE_MACROS_TEXT}) or an interval: "every 15m", "30s", "2h", "1d"`,
    )
    .option("--prompt <text>", "the prompt the agent runs")
    .option("--deliver <target>", "delivery target for the reply (default log)")
    .option("--deliver-extra <key=value>", "target-specific key (repeatable)", collectPairs);
  requireOptions(createCommand, ["name", "schedule", "prompt"]).action((options: CreateOptions) =>
    create(options),
  );
  createCommand.configureOutput({
    outputError: (text, write) =>
      write(unquotedValueError(text, createCommand, CREATE_EXAMPLES, SHOWN_VALUES)),
  });
  // The short names `svc webhook` takes too (ls, rm).
  cron.command("list").alias("ls").description("list jobs").action(list);
  cron
    .command("pause <id-or-name>")
    .description("stop running a job until resumed")
    .action((ref: string, options: ProfileOption) => setState(ref, "paused", options));
  cron
    .command("resume <id-or-name>")
    // A job's state is then `enabled`, and `svc webhook` names it so: unknown, `enable` was answered
    // "Did you mean disable?" and `unpause` "Did you mean pause?", the opposite of what was meant.
    .aliases(["enable", "unpause"])
    .description("run a paused or disabled job on its schedule again (or: unpause)")
    .action((ref: string, options: ProfileOption) => setState(ref, "enabled", options));
  cron
    .command("disable <id-or-name>")
    .description("disable a job")
    .action((ref: string, options: ProfileOption) => setState(ref, "disabled", options));
  cron.command("remove <id-or-name>").alias("rm").description("delete a job").action(remove);
  cron
    .command("run <id-or-name>")
    .description("run a job once now with the configured agent and target, print the reply")
    .action(runNow);
  // Each profile has its own cron store, like its own MCP tokens (`svc mcp login --profile`).
  for (const command of cron.commands) {
    command.option("--profile <name>", "profile whose cron jobs to use (default: the default profile)");
  }
}

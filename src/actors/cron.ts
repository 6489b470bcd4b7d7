import { randomBytes } from "node:crypto";
import { fromCallback } from "xstate";
import { scopedSignal } from "../clock.js";
import { nearMiss } from "../config/nearMiss.js";
import { DEFAULT_PROFILE, inProfile, namedProfile, profileFlag } from "../config/paths.js";
import { LoggedError, RunFailedAtStop, RunKeptForRestart } from "../errors.js";
import type { CronRunNotes } from "../io/cronRunNotes.js";
import type { Logger } from "../io/log.js";
import { profilesNotListed } from "../io/profiles.js";
import { storeProblem, storeWriteReason } from "../io/stores/atomicFile.js";
import {
  findJob,
  invalidJobMessage,
  type JobRecord,
  notATimeAdvice,
  parseCronJob,
} from "../io/stores/cronJobRecord.js";
import {
  type CronJob,
  type CronStore,
  lastRunAtOrBefore,
  nextRunAfter,
  nextRunTime,
  occurrencesBetween,
  parseSchedule,
  runsOnTheNewClock,
} from "../io/stores/cronStore.js";
import type { AcceptedEvent, CronFireResult, CronSkipped } from "../streams/context.js";
import { killedByStopSignal } from "./agent/command.js";
import { failureNotice } from "./agent/failureNotice.js";
import { type AgentRunner, DEFAULT_WEBHOOK_TOOLSETS } from "./agent/runner.js";
import type { Deliverer } from "./deliver.js";
import { fireEventLine } from "./firedJob.js";
import { createLastRunWriter } from "./lastRuns.js";
import { type FiredJob, keptReply, NOT_RUN, type QueuedRun, type RunExecutor, type RunSlot } from "./runs.js";
import { UndeliveredReply } from "./undeliveredReply.js";

/** The webhook route whose event fired a job: with `mirror_to_session`, the job's chat reply is mirrored under its name. */
export interface FiredBy {
  readonly route: string;
  /** The firing event's delivery ID: the delivery history shows the job's delivery on that event's row. */
  readonly deliveryId: string;
  readonly mirrorToSession: boolean;
  /**
   * The run slot the fire's run holds (taken from the run queue), and that run: handed back while the job's
   * delivery waits to retry, as an agent run's is.
   */
  readonly slot?: RunSlot | undefined;
  readonly run?: QueuedRun | undefined;
}

/** Runs one job's prompt as an agent run of its profile; resolves with the reply once it is delivered. */
export type CronJobRunner = (
  job: CronJob,
  prompt: string,
  trigger: string,
  profile: string,
  signal?: AbortSignal,
  firedBy?: FiredBy,
) => Promise<string>;

export interface CronClock {
  now(): number;
  /**
   * Milliseconds on a clock that is never set (`performance.now`), if known: a check that finds the wall
   * clock moved further than this one stepped forward (or the machine slept), which is met as a stop.
   */
  elapsed?(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Each profile has its own cron store; the scheduler serves all of them. */
export interface CronStores {
  /** The profiles whose scheduled jobs run, asked on every tick (a profile created later is picked up). */
  profiles(): readonly string[];
  /** A profile's store; may throw for a name that cannot be a profile. */
  store(profile: string): CronStore;
  /**
   * Why `profile`'s store cannot be used as it stands (its directory or its `cron` directory a symbolic link to
   * nothing, a file in its place), if so: asked only when its store has no job of the name fired (or cannot be
   * read), so not on every event, and by each check that finds the store without a file (its jobs are then not
   * scheduled, said as for a store that cannot be read).
   */
  unusable?(profile: string): string | undefined;
}

export interface CronSchedulerOptions {
  readonly stores: CronStores;
  readonly runJob: CronJobRunner;
  /**
   * Runs the scheduler starts itself (scheduled ones, not those from the run queue, which has its own):
   * wraps each, e.g. to time it into the run metrics. Default: as it is.
   */
  readonly timeRun?: (run: () => Promise<void>) => Promise<void>;
  readonly logger: Logger;
  readonly clock?: CronClock;
  /** How often the stores are checked for due jobs (default 1 s). */
  readonly tickMs?: number;
  /**
   * The gateway's bounded run queue: a job fired by a webhook event waits there like any agent run
   * (`agent.max_concurrent_runs`, saved at stop) and is run by `runFired`; false when the queue is full.
   * Without it, a fired job starts at once.
   */
  readonly enqueue?: (run: AcceptedEvent) => boolean | Promise<boolean>;
  /**
   * A fired job's event dropped at its turn in the queue (the job paused, disabled, removed or made invalid
   * since it was answered 202, or its store cannot be read), with why, as the log line says it: the delivery
   * history's NOTE.
   */
  readonly dropped?: (run: QueuedRun, why: string) => void;
  /**
   * A fired job's event dropped at its turn because its store could not be read: its delivery ID is
   * forgotten, as the arrival's 503 forgets it, so the sender's retry is taken once the store is fixed.
   */
  readonly forget?: (run: QueuedRun) => void;
  /**
   * Several gateways sharing state (Redis): a scheduled run starts only on the instance that claims the
   * job's due time first. Without it, every due job runs here. `nextDueAt`, the job's due time after
   * `dueAt`, bounds how long the claim is kept.
   */
  readonly claim?: (
    profile: string,
    jobId: string,
    dueAt: string,
    ahead?: boolean,
    nextDueAt?: string,
  ) => Promise<boolean>;
  /**
   * Gives back a due time claimed ahead of time: while a scheduled run goes on, the instance running it
   * holds the job's next due time too, so no other instance starts that occurrence over the run.
   */
  readonly release?: (profile: string, jobId: string, dueAt: string) => Promise<void>;
  /**
   * Whether a due time this instance did not win is only held ahead by another instance (its scheduled run of
   * the job went on when the time came) or free by now, rather than claimed for a run. Such a due time is
   * claimed again at each check until it is taken for a run (its holder's run went on past it: skipped, as on
   * one gateway) or this instance wins it, once the hold of an instance that died mid-run lapses: the
   * occurrence then runs here, rather than on no instance.
   */
  readonly heldAhead?: (profile: string, jobId: string, dueAt: string) => Promise<boolean>;
  /**
   * The latest of a job's due times (given latest first, each with the one after it) that some instance
   * claimed, read while their claims may still be kept (minutes at least): a catch-up says as missed only the
   * due times after it, the ones no instance ran. With none found, the latest one not read (its claim lapsed
   * by now) and how long a claim is kept. Without it they count from the store's `next_run`.
   */
  readonly claimedDueTimes?: (
    profile: string,
    jobId: string,
    dueTimes: Iterable<{ readonly dueAt: string; readonly nextDueAt: string }>,
    now: number,
  ) => Promise<{
    readonly latest?: string;
    readonly unread?: { readonly dueAt: string; readonly keptMs: number };
  }>;
  /**
   * What this process's claims hold (`claim`): noted with a scheduled run, so the start after a kill may
   * give back the due time it claimed (`recordCutOffRuns`). Without it such a run is not caught up.
   */
  readonly claimHolder?: string;
  /**
   * What is wrong with a job's target under the gateway's config (its platform not enabled, no
   * recipient), each as `deliver...: <problem>`: said once per enabled job (again when its target changes),
   * since every run of it would only fail at its delivery.
   */
  readonly targetProblems?: (job: CronJob) => readonly string[];
  /** What `targetProblems` judges by (the config its targets come from): a new one checks every job again. */
  readonly targetsVersion?: () => unknown;
  /**
   * Notes each scheduled run while it goes on (not journaled: a start after a SIGKILL records the runs the
   * killed gateway cut short, `docs/durability.md`).
   */
  readonly runNotes?: CronRunNotes;
  /**
   * Whether the gateway's stop began within a moment of now (waiting that moment for it): asked when a stop
   * signal ended a run's agent command, which then was the gateway's own stop reaching its agents too.
   */
  readonly stopNear?: () => Promise<boolean>;
}

/** A scheduled run's occurrence: its due time (`next_run` before the run advanced it) and the `next_run` written. */
interface Occurrence {
  readonly dueRun: string;
  readonly advancedTo: string;
  /** The due time this instance claimed for it (several instances sharing state). */
  readonly claimedDueAt?: string;
}

/** What `execute` says of a run the gateway's stop ended: not a failure. */
const INTERRUPTED = Symbol("interrupted");

/**
 * How long after its due time an occurrence held ahead by another instance is awaited: that instance's hold
 * lapses a minute after its last claim (`cronLease`), and it claims it every check while its run goes on.
 */
const HOLD_WAIT_MS = 75_000;

export interface CronScheduler {
  /** Runs every enabled job of every profile whose next run is due; returns the ids started. */
  tick(): Promise<string[]>;
  /**
   * Fires a job of the event's profile (the route's `profile`) for a webhook event:
   * paused, disabled or unknown in that profile → `skipped`; a store that cannot be read, or a profile
   * directory that is a link to nothing → `unreadable` (the sender is asked to retry); both logged.
   */
  fire(jobRef: string, event: AcceptedEvent): CronFireResult | Promise<CronFireResult>;
  /**
   * Runs a fired job taken from the run queue (its `prompt` is the job's prompt with the event), after
   * checking again that the job is still enabled (paused meanwhile, or its store unreadable: dropped, logged,
   * `NOT_RUN`; for an unreadable store its delivery ID is forgotten, `forget`). A failed
   * run (logged and recorded in `last_run`) rejects with a `LoggedError`, so the queue counts it failed.
   */
  runFired(run: QueuedRun, signal: AbortSignal, slot?: RunSlot): ReturnType<RunExecutor>;
  /**
   * A fired job's run given up elsewhere (the shared queue gave its job up: its instance was lost while
   * running it): recorded in the job's `last_run` as a failed run is (`status: error`, with `error`), written
   * behind as a run's is. A job removed meanwhile is not written again.
   */
  givenUp(
    run: Pick<AcceptedEvent, "profile" | "routeName" | "deliveryId"> & { readonly cronJob: string },
    error: string,
  ): void;
  /** Resolves when every run started so far has finished. */
  idle(): Promise<void>;
  /**
   * Stops the runs it started itself (scheduled ones, and fires without a run queue): each agent is
   * stopped as a stopped webhook run is (its whole process group). The gateway's stop, past its drain.
   */
  abortRuns(): void;
  start(): void;
  stop(): void;
}

/**
 * A fired job's prompt: the job's own prompt, then the triggering event (route, type, delivery id) and
 * the route's rendered prompt as that event's context (a route without `prompt` renders the payload as
 * a payload without a prompt is rendered: indented, numbers as sent, cut at 4000 characters).
 */
export function eventPrompt(job: CronJob, event: AcceptedEvent): string {
  return `${job.prompt}\n\n${fireEventLine(event)}\n${event.prompt}`;
}

const removeCommand = (profile: string) => `svc cron remove${profileFlag(profile)}`;

const REAL_CLOCK: CronClock = {
  now: Date.now,
  elapsed: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** How long a claim is kept, said in its largest whole unit (`5 minutes`, `2 hours`, `2 days`). */
function keptText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, unit] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms === size ? "" : "s"}`;
  }
  return `${Math.ceil(ms / 1000)} seconds`;
}

export function createCronScheduler(options: CronSchedulerOptions): CronScheduler {
  const clock = options.clock ?? REAL_CLOCK;
  const { stores, logger } = options;
  const running = new Set<Promise<void>>();
  /** Aborts the runs `launch` started: the gateway's stop, once its drain is over. */
  const launched = new AbortController();
  /**
   * `<profile>\0<job id>` of the scheduled runs in progress, each with the due times this instance holds
   * ahead of time while it runs (several instances sharing state), the job's schedule, and how many of
   * its occurrences were skipped while it runs (said once as the first is skipped, counted when it ends).
   */
  const scheduledRuns = new Map<
    string,
    { readonly schedule: string; readonly ahead: Set<string>; skipped: number }
  >();
  /**
   * `<profile>\0<job id>` of jobs whose due time (`dueAt`) was held ahead by another instance when it came:
   * claimed again at each check until taken for a run or won here (`heldAhead`), at most until `until`.
   */
  const awaitedHolds = new Map<string, { readonly dueAt: string; readonly until: number }>();
  /** `<profile>\0<job id>` of jobs whose scheduled run the stop interrupted: due again for the next start. */
  const dueAgainKeys = new Set<string>();
  /**
   * `<profile>\0<job id>` of due jobs not run since their next run could not be written (said once), with why
   * it could not: the runs they missed meanwhile are said as missed for it, not for a gateway that was down.
   */
  const unadvanced = new Map<string, string>();
  let timer: unknown;
  let stopped = true;
  /** The schedule was started and then stopped (the gateway's stop): a check still under way starts nothing new. */
  let ended = false;
  let listFailed = false;
  /** The last store error logged per profile: the stores are read every second, the log says it once. */
  const storeErrors = new Map<string, string>();
  /**
   * Per profile, why its jobs were not scheduled for a while (its store could not be read, or was emptied)
   * until the store was read with jobs again: the runs missed meanwhile are said as missed for it.
   */
  const storeGaps = new Map<string, string>();
  /** `<profile>\0<job id>\0<schedule>` of jobs whose schedule was reported as invalid. */
  const badSchedules = new Set<string>();
  /** `<profile>\0<key>` of records edited by hand into invalid ones, with the problem last logged. */
  const badRecords = new Map<string, string>();
  /** The `last_run` warnings said, by profile and job id (said again when one changes). */
  const badLastRuns = new Map<string, string>();
  /** `<profile>\0<job id>` → the target (deliver and extras) last checked by `targetProblems`. */
  const checkedTargets = new Map<string, { target: string; version: unknown }>();
  /**
   * `<profile>\0<job id>` → the schedule, next_run and state the last tick saw (a hand edit of them shows),
   * and `inEffect`: the schedule and next_run last seen while the job was enabled (or first seen), which a
   * schedule edited while it was paused or disabled is a change from once it is enabled again.
   */
  const lastSeen = new Map<
    string,
    {
      schedule: string;
      next_run: string | undefined;
      state: CronJob["state"];
      inEffect: { schedule: string; next_run: string | undefined };
    }
  >();
  const tickMs = options.tickMs ?? 1000;
  /** The clock's time at the last tick: a tick that finds an earlier one sees the clock set back. */
  let lastTickAt: number | undefined;
  /** The clock's time when the schedule started (`start`): a job due after it is no catch-up. */
  let startedAt: number | undefined;
  /** `clock.elapsed()` at the last tick. */
  let lastTickElapsed: number | undefined;
  /**
   * Each profile's records as last checked, with the store's revision then and each record's JSON text: a
   * tick over an unchanged store checks none again, and over a changed one (a run's last_run written) only
   * the records that changed (checking 200 jobs, schema and schedule each, cost ~28 ms every second).
   */
  const checkedRecords = new Map<
    string,
    {
      path: string;
      revision: string;
      records: JobRecord[];
      byKey: Map<string, { text: string; record: JobRecord }>;
    }
  >();

  /** The records of `profile`'s store, checked; parsed again only when the file changed. Throws as `read`. */
  function currentRecords(profile: string, store: CronStore): JobRecord[] {
    const last = checkedRecords.get(profile);
    if (last !== undefined && last.path === store.path && last.revision === store.revision())
      return last.records;
    const { revision, records, empty } = store.read();
    const before = last?.path === store.path ? last.byKey : undefined;
    if (empty !== undefined) {
      // Emptied while its jobs were scheduled (`jq … jobs.json > jobs.json` empties it before jq reads it):
      // said, else the jobs stop with no line at all. A file made empty stays quiet.
      if (before !== undefined && before.size > 0)
        logger.warn(
          { profile },
          `[cron] ${store.path} is empty: its ${before.size} job(s) are no longer scheduled — restore it from a backup, or create them again with svc cron create${profileFlag(profile)}`,
        );
      if (before !== undefined && before.size > 0) storeGaps.set(profile, `while ${store.path} was empty`);
    }
    const byKey = new Map<string, { text: string; record: JobRecord }>();
    const checked = Object.entries(records).map(([key, raw]) => {
      const text = JSON.stringify(raw);
      const kept = before?.get(key);
      const record =
        kept !== undefined && kept.text === text ? kept.record : parseCronJob(store.path, key, raw);
      byKey.set(key, { text, record });
      return record;
    });
    checkedRecords.set(profile, { path: store.path, revision, records: checked, byKey });
    return checked;
  }

  /** Writes a change to job `id`; resolves with the error when the store could not be written. */
  async function write(
    store: CronStore,
    id: string,
    change: (job: CronJob) => CronJob,
  ): Promise<Error | undefined> {
    try {
      if (storeGone(store)) return undefined;
      await store.update((jobs) => {
        const job = jobs[id];
        if (job !== undefined) jobs[id] = change(job); // a job removed meanwhile stays removed
      });
      return undefined;
    } catch (err) {
      return err as Error;
    }
  }

  async function record(store: CronStore, id: string, change: (job: CronJob) => CronJob): Promise<void> {
    const err = await write(store, id, change);
    if (err !== undefined)
      logger.error({ job: id, err: err.message }, "[cron] could not record the job's run");
  }

  const lastRuns = createLastRunWriter(async (store, runs) => {
    try {
      if (storeGone(store)) return;
      await store.update((jobs) => {
        for (const [id, lastRun] of runs) {
          const job = jobs[id];
          if (job !== undefined) jobs[id] = { ...job, last_run: lastRun }; // a job removed meanwhile stays removed
        }
      });
    } catch (err) {
      for (const id of runs.keys())
        logger.error({ job: id, err: (err as Error).message }, "[cron] could not record the job's run");
    }
  });

  /**
   * Runs the job and records its `last_run` (written behind); never rejects (a failure is logged and
   * recorded): resolves with the failure's text, undefined when the run succeeded, or `INTERRUPTED` when the
   * gateway's stop ended it (its drain, or the stop's own signal reaching its agent): not a failure, recorded
   * as `interrupted`; a scheduled run's occurrence (`occurrence`) is then due again, for the next start.
   */
  async function execute(
    profile: string,
    store: CronStore,
    job: CronJob,
    prompt: string,
    trigger: string,
    signal?: AbortSignal,
    firedBy?: FiredBy,
    timed = false,
    occurrence?: Occurrence,
  ): Promise<string | undefined | typeof INTERRUPTED> {
    const label = `[cron] ${job.name}${inProfile(profile)}`;
    let status: "ok" | "error" | "interrupted" = "ok";
    let error: string | undefined;
    const run = async () => {
      try {
        await options.runJob(job, prompt, trigger, profile, signal, firedBy);
      } catch (err) {
        // Its agent ended by the stop signal the gateway got too (a systemd unit's whole cgroup): the stop's.
        if (
          signal?.aborted !== true &&
          options.stopNear !== undefined &&
          killedByStopSignal(err) &&
          (await options.stopNear())
        )
          throw new RunKeptForRestart(`${label}: ${(err as Error).message}`, { cause: err });
        throw err;
      }
    };
    try {
      await (timed && options.timeRun !== undefined ? options.timeRun(run) : run());
      logger.info({ job: job.id, profile, trigger }, `${label}: run finished`);
    } catch (err) {
      status = "error";
      if (
        (signal?.aborted === true && !(err instanceof RunFailedAtStop)) ||
        err instanceof RunKeptForRestart
      ) {
        status = "interrupted";
        const how =
          signal?.aborted === true ? "before it finished" : "(its agent ended by the stop's signal)";
        const again =
          occurrence === undefined ? "" : "; it runs again at the next start, as a missed run does";
        logger.warn(
          { job: job.id, profile, trigger },
          `${label}: run interrupted by the gateway's stop ${how}${again}`,
        );
        if (occurrence !== undefined) await dueAgain(profile, store, job, occurrence);
      } else {
        error = (err as Error)?.message ?? String(err);
        // The reply its target did not take is kept nowhere else: the line keeps it.
        const reply = err instanceof UndeliveredReply ? { reply: err.reply } : {};
        const failure = err instanceof RunFailedAtStop ? err.cause : err;
        const noticed = typeof failure === "object" && failure !== null ? noticedAs.get(failure) : undefined;
        logger.error(
          {
            job: job.id,
            profile,
            trigger,
            ...(noticed === undefined ? {} : { delivery_id: noticed }),
            err: error,
            ...reply,
          },
          `${label}: run failed`,
        );
      }
    }
    const at = new Date(clock.now()).toISOString();
    lastRuns.record(store, job.id, { at, status, trigger, ...(error === undefined ? {} : { error }) });
    return status === "interrupted" ? INTERRUPTED : error;
  }

  /**
   * A scheduled run the stop interrupted leaves its occurrence due, as a missed one: `next_run` back to its
   * due time (unless edited since), so the next start runs it once as a catch-up; the due time claimed for
   * it (several instances) is given back, so that start may claim it again.
   */
  async function dueAgain(profile: string, store: CronStore, job: CronJob, occurrence: Occurrence) {
    dueAgainKeys.add(`${profile}\u0000${job.id}`);
    await record(store, job.id, (current) =>
      current.next_run === occurrence.advancedTo ? { ...current, next_run: occurrence.dueRun } : current,
    );
    if (occurrence.claimedDueAt !== undefined)
      await options.release?.(profile, job.id, occurrence.claimedDueAt).catch(() => {});
  }

  function launch(
    profile: string,
    store: CronStore,
    job: CronJob,
    prompt: string,
    trigger: string,
    finished?: () => void,
    firedBy?: FiredBy,
    occurrence?: Occurrence,
  ): void {
    // The occurrence of a run on the schedule is noted, so the start after a kill catches it up; one claimed
    // from other instances (Redis) with the claim's due time and holder, which that start gives back first.
    const { claimHolder } = options;
    const caughtUp =
      occurrence === undefined || (occurrence.claimedDueAt !== undefined && claimHolder === undefined)
        ? {}
        : {
            dueRun: occurrence.dueRun,
            advancedTo: occurrence.advancedTo,
            ...(occurrence.claimedDueAt === undefined
              ? {}
              : { claimedDueAt: occurrence.claimedDueAt, claimHolder }),
          };
    const ended =
      trigger === "schedule"
        ? options.runNotes?.started({ profile, jobId: job.id, trigger, startedAt: clock.now(), ...caughtUp })
        : undefined;
    // A signal of the run's own: composed from `launched.signal` itself, each run left entries in it (scopedSignal).
    const run = scopedSignal([launched.signal], (signal) =>
      execute(profile, store, job, prompt, trigger, signal, firedBy, true, occurrence),
    ).then(() => {});
    running.add(run);
    void run.finally(() => {
      ended?.();
      running.delete(run);
      finished?.();
    });
  }

  /**
   * The job `jobRef` of the event's profile when it may be fired; otherwise logs why not: `skipped` (the
   * job is paused, disabled or unknown: the event is dropped) or `unreadable` (the store cannot be read, or
   * the profile's directory cannot hold it: a link to nothing), with the line's text after the route.
   */
  function firable(
    jobRef: string,
    event: Pick<AcceptedEvent, "routeName" | "deliveryId" | "profile">,
    unreadable: (problem: string) => string,
  ): { store: CronStore; job: CronJob } | CronSkipped | { readonly unreadable: string } {
    const { profile } = event;
    const fields = { route: event.routeName, delivery_id: event.deliveryId, job: jobRef, profile };
    let store: CronStore;
    let job: CronJob | undefined;
    let records: readonly JobRecord[] = [];
    const notReadable = (problem: string) => {
      const why = `cron_job ${jobRef}${inProfile(profile)} not fired — ${unreadable(problem)}`;
      logger.error(fields, `[webhook] ${event.routeName}: ${why}`);
      return { unreadable: why };
    };
    try {
      store = stores.store(profile);
    } catch (err) {
      // Not a profile at all: no retry can fire it.
      const why = `cron_job ${jobRef} not fired — ${(err as Error).message}; event dropped`;
      logger.error(fields, `[webhook] ${event.routeName}: ${why}`);
      return { skipped: why };
    }
    try {
      // Fired on every event of a cron_job route: the store is parsed only when it changed.
      records = currentRecords(profile, store);
      const found = findJob(records, jobRef);
      if (found !== undefined && !found.ok) {
        // Edited by hand into a record the gateway cannot run: said with its file, key and problem.
        const why = `cron_job ${jobRef}${inProfile(profile)} not fired — ${invalidJobMessage(found, removeCommand(profile))}; event dropped`;
        logger.error(fields, `[webhook] ${event.routeName}: ${why}`);
        return { skipped: why };
      }
      job = found?.job;
    } catch (err) {
      return notReadable(stores.unusable?.(profile) ?? (err as Error).message);
    }
    // Not a job it lacks, when the profile's directory is a link to nothing (a dotfiles checkout moved):
    // the jobs are there again once it is restored.
    const unusable = job === undefined ? stores.unusable?.(profile) : undefined;
    if (unusable !== undefined) return notReadable(unusable);
    if (job === undefined || job.state !== "enabled") {
      const why = `cron_job ${jobRef} ${job === undefined ? "does not exist" : `is ${job.state}`}${inProfile(profile)}; event dropped${job === undefined ? meantJob(records, jobRef) : ""}`;
      logger.warn(fields, `[webhook] ${event.routeName}: ${why}`);
      return { skipped: why };
    }
    return { store, job };
  }

  /** Per store read: the job each unknown `cron_job` reference means (a name misspelt or in other letters). */
  const meantJobs = new WeakMap<readonly JobRecord[], Map<string, string>>();
  /** `— did you mean <job>?` for an unknown reference `jobRef`, as the start's warning says it; else "". */
  function meantJob(records: readonly JobRecord[], jobRef: string): string {
    // Every event of the route is dropped with it: worked out once per reference and store read.
    const known = meantJobs.get(records) ?? new Map<string, string>();
    meantJobs.set(records, known);
    let hint = known.get(jobRef);
    if (hint === undefined) {
      const names = records.flatMap((r) => {
        const name = r.ok ? r.job.name : r.name;
        return name === undefined ? [] : [name];
      });
      const meant = nearMiss(jobRef.trim(), names);
      hint = meant === undefined ? "" : ` — did you mean ${meant}?`;
      known.set(jobRef, hint);
    }
    return hint;
  }

  const firedTrigger = (event: Pick<AcceptedEvent, "routeName" | "deliveryId">) =>
    `webhook:${event.routeName}:${event.deliveryId}`;
  const firedBy = (
    event: Pick<AcceptedEvent, "routeName" | "route" | "deliveryId">,
    held?: { slot: RunSlot | undefined; run: QueuedRun },
  ): FiredBy => ({
    route: event.routeName,
    deliveryId: event.deliveryId,
    mirrorToSession: event.route.mirror_to_session === true,
    ...(held?.slot === undefined ? {} : { slot: held.slot, run: held.run }),
  });

  /** The profiles to tick; when they cannot be listed, the default profile alone (logged once). */
  function profiles(): readonly string[] {
    try {
      const found = stores.profiles();
      listFailed = false;
      return found;
    } catch (err) {
      if (!listFailed) {
        logger.error(`[cron] ${profilesNotListed(err)}`);
      }
      listFailed = true;
      return [DEFAULT_PROFILE];
    }
  }

  /**
   * Why `profile`'s store, read as having no file, cannot be used (`stores.unusable`): only a store whose
   * `jobs.json` is not there can be one, so a store with a file (empty or not) is not looked at again.
   */
  function unusableStore(profile: string): string | undefined {
    return checkedRecords.get(profile)?.revision === "" ? stores.unusable?.(profile) : undefined;
  }

  /**
   * `checkedSince`: when the scheduler last checked before this check (its start for the first one), if
   * ever: a job due after it is found on time.
   */
  async function tickProfile(
    profile: string,
    now: number,
    stepBackMs = 0,
    checkedSince?: number,
  ): Promise<string[]> {
    let store: CronStore;
    let due: CronJob[];
    let records: JobRecord[];
    let path: string | undefined;
    try {
      store = stores.store(profile);
      path = store.path;
      records = currentRecords(profile, store);
      // No jobs read through a `cron` directory (or a profile's) that is a link to nothing: not a store without
      // jobs, one that cannot be read — said once, and the runs missed meanwhile are said as missed for it.
      const unusable = records.length === 0 ? unusableStore(profile) : undefined;
      if (unusable !== undefined) throw new Error(unusable);
      reportInvalid(profile, records);
      reportLastRuns(profile, records);
      reportTargets(profile, store.path, records);
      await followEditedSchedules(profile, store, records, now);
      if (stepBackMs > 0) await followClockStep(store, records, now, stepBackMs);
      due = records
        .flatMap((record) => (record.ok ? [record.job] : []))
        .filter(
          // A next_run that is not a time (hand-edited) is due: it is set again from the schedule below.
          (job) =>
            job.state === "enabled" && (job.next_run === undefined || !(nextRunTime(job.next_run) > now)),
        );
    } catch (err) {
      // A `cron` directory in a loop of links fails the read with a bare ELOOP: said as the store names it.
      const message = `[cron] ${stores.unusable?.(profile) ?? (err as Error).message}`;
      if (storeErrors.get(profile) !== message) logger.error(message);
      storeErrors.set(profile, message);
      storeGaps.set(profile, `while ${path ?? "its store"} could not be read`);
      return [];
    }
    storeErrors.delete(profile);
    const gap = records.length > 0 ? storeGaps.get(profile) : undefined;
    if (gap !== undefined) storeGaps.delete(profile);
    await renewHeld(profile, now);
    const started: string[] = await runLapsedHolds(profile, store, records, now);
    /** The due jobs to run, each with its next run: all written to the store at once, below. */
    const advances: Array<{
      job: CronJob;
      key: string;
      next: number;
      nextRun: string;
      /**
       * Changed by another writer since the read (removed, paused, another next_run or a refused schedule), or
       * the gateway's stop began meanwhile: not run.
       */
      edited?: boolean;
      /** A catch-up's: how many runs came due since its next_run (said when more than the one it runs). */
      missed?: number;
    }> = [];
    for (const job of due) {
      let next: number;
      try {
        // With a shared state, an interval found late goes on from the due time its catch-up claims (the
        // latest one), not from now: the instances' next runs stay the same due times, whose leases keep
        // them to one run each (from each one's own now, every instance back from a restart ran its own).
        // Alone, an interval keeps its times only for a run found by the first check after it came due: one
        // due before that check (the gateway was down, or it is the first check since the start) is a
        // catch-up, and the schedule continues from now — an `every 1d` job caught up 23 hours late is not
        // due again an hour later.
        const dueAt =
          job.next_run === undefined
            ? undefined
            : options.claim !== undefined
              ? nextRunTime(dueTime(job.schedule, job.next_run, now))
              : checkedSince !== undefined && nextRunTime(job.next_run) > checkedSince
                ? nextRunTime(job.next_run)
                : undefined;
        next = nextRunAfter(job.schedule, now, dueAt);
      } catch (err) {
        // A hand-edited schedule the grammar refuses: next_run could never advance, so running it would
        // repeat on every tick. It is not run, and said once (until its schedule changes).
        const key = `${profile}\u0000${job.id}\u0000${job.schedule}`;
        if (!badSchedules.has(key)) {
          badSchedules.add(key);
          logger.error(
            { job: job.id, profile },
            `[cron] ${job.name}${inProfile(profile)}: ${(err as Error).message} — the job does not run until its schedule is fixed in ${store.path} (or the job is recreated with svc cron create${profileFlag(profile)})`,
          );
        }
        continue;
      }
      const key = `${profile}\u0000${job.id}`;
      if (draining && !scheduledRuns.has(key)) continue;
      // Its run interrupted by the stop, its occurrence due again for the next start: not run (nor advanced) now.
      if (ended && dueAgainKeys.has(key)) continue;
      // Found late (the gateway was down, or the clock stepped forward): one catch-up run for all that came due.
      // With a shared state too: said below only by the instance that wins the catch-up's claim.
      const missedFrom =
        job.next_run !== undefined &&
        !(checkedSince !== undefined && nextRunTime(job.next_run) > checkedSince)
          ? nextRunTime(job.next_run)
          : Number.NaN;
      const missed = Number.isNaN(missedFrom) ? 0 : occurrencesBetween(job.schedule, missedFrom, now);
      advances.push({
        job,
        key,
        next,
        nextRun: new Date(next).toISOString(),
        ...(missed > 1 ? { missed } : {}),
      });
    }
    // Advance next_run before running, so a slow or failing job is not started twice: in one write of the
    // store for all the jobs due (one write each, 500 jobs due at the same minute held the gateway ~4 s).
    const unwritten =
      advances.length === 0
        ? undefined
        : await store
            .update((jobs) => {
              for (const advance of advances) {
                const current = jobs[advance.job.id];
                // Removed, paused, disabled or given another next_run since this check read the store (svc
                // cron pause, a hand edit): not run, and what the other writer wrote stays; the next check
                // judges the job as it is now. Judged as read (a record written by hand has no state).
                if (current === undefined) {
                  advance.edited = true; // a job removed meanwhile stays removed
                  continue;
                }
                // The gateway's stop began while this check waited for the store (its lock held by a command):
                // nothing new starts now, after the stop's drain; the job stays due, and the next start runs it.
                if (ended && !scheduledRuns.has(advance.key)) {
                  advance.edited = true;
                  continue;
                }
                const latest = parseCronJob(store.path, advance.job.id, current);
                if (
                  !latest.ok ||
                  latest.job.state !== "enabled" ||
                  latest.job.next_run !== advance.job.next_run
                ) {
                  advance.edited = true;
                  continue;
                }
                if (current.schedule !== advance.job.schedule) {
                  try {
                    advance.nextRun = new Date(nextRunAfter(current.schedule, now)).toISOString();
                  } catch {
                    // Edited meanwhile into a schedule the grammar refuses: not run; the next tick names it.
                    advance.edited = true;
                    continue;
                  }
                }
                jobs[advance.job.id] = { ...current, next_run: advance.nextRun };
              }
            })
            .then(
              () => undefined,
              (err: unknown) => err as Error,
            );
    for (const { job, key, next, nextRun, edited, missed } of advances) {
      if (edited === true) continue;
      if (unwritten !== undefined) {
        // With next_run still in the past, a run now would start again at every check (an @hourly job
        // ran each second while its store could not be written): not run. Said once until a write succeeds.
        if (!unadvanced.has(key))
          logger.error(
            { job: job.id, profile, err: storeProblem(unwritten) },
            `[cron] ${job.name}${inProfile(profile)}: not run — its next run could not be written to ${store.path} (${storeProblem(unwritten)}), and without it the job would start again at every check; it runs once the file can be written`,
          );
        unadvanced.set(key, storeWriteReason(unwritten));
        continue;
      }
      const notWritten = unadvanced.get(key);
      unadvanced.delete(key);
      if (job.next_run === undefined) continue;
      if (Number.isNaN(nextRunTime(job.next_run))) {
        logger.warn(
          { job: job.id, profile },
          `[cron] ${job.name}${inProfile(profile)}: next_run ${JSON.stringify(job.next_run.slice(0, 40))} in ${store.path} is not a time; it is set from the schedule to ${new Date(next).toISOString()}${notATimeAdvice(job.next_run)}`,
        );
        continue;
      }
      // A run that outlasts the interval is not overlapped by the next one: that occurrence is skipped.
      const held = scheduledRuns.get(key);
      if (held !== undefined) {
        // One line as the skipping starts, not one per occurrence (an `every 1m` job an hour behind); the
        // count is said when the run ends.
        if (held.skipped === 0)
          logger.warn(
            { job: job.id, profile },
            `[cron] ${job.name}${inProfile(profile)}: the previous scheduled run is still running; its next occurrences are skipped until it ends`,
          );
        held.skipped += 1;
        // Several instances: the occurrence skipped here and the next one are held by this instance, so
        // none of the others starts one while the run goes on.
        await holdAhead(profile, job, [job.next_run, nextRun], held.ahead, now);
        continue;
      }
      const claimedDueAt = options.claim === undefined ? undefined : dueTime(job.schedule, job.next_run, now);
      if (claimedDueAt !== undefined && !(await claimed(profile, job, claimedDueAt))) {
        await awaitHold(profile, key, job, claimedDueAt, nextRun);
        continue;
      }
      // One line for every run missed, not a line each; with a shared state, only those no instance ran.
      const unrun =
        missed === undefined || job.next_run === undefined
          ? undefined
          : claimedDueAt === undefined
            ? { missed, since: job.next_run }
            : await unclaimed(profile, job, job.next_run, claimedDueAt, missed, now);
      if (unrun !== undefined && unrun.missed > 1) {
        const why =
          notWritten !== undefined
            ? `while its next run could not be written to ${store.path}: ${notWritten}`
            : (gap ??
              (claimedDueAt === undefined
                ? "(the gateway was not running, or its clock stepped forward)"
                : "(none was running, or the clocks stepped forward)"));
        const count = unrun.missed >= 100 ? "100 or more" : unrun.missed;
        const said =
          claimedDueAt === undefined
            ? ` ${why}`
            : unrun.unreadable !== undefined
              ? `: whether an instance sharing the state ran some of them is not known — their claims could not be read from Redis (${unrun.unreadable})`
              : unrun.lapsedAfterMs === undefined
                ? `: no gateway instance sharing the state ran them ${why}`
                : `: none has a claim left in Redis — no gateway instance sharing the state ran them ${why}, or one ran them more than ${keptText(unrun.lapsedAfterMs)} ago (a claim is kept that long)`;
        logger.warn(
          { job: job.id, profile, missed: unrun.missed },
          `[cron] ${job.name}${inProfile(profile)}: ${count} scheduled runs were missed since ${unrun.since}${said}; they are not run one by one — one catch-up run now, then the schedule goes on`,
        );
      }
      await startScheduled(profile, store, key, job, now, {
        dueRun: job.next_run,
        advancedTo: nextRun,
        ...(claimedDueAt === undefined ? {} : { claimedDueAt }),
      });
      started.push(job.id);
    }
    return started;
  }

  /**
   * Starts a scheduled run of `job` for the occurrence given, holding the job's next due time ahead while it
   * goes on (several instances sharing state).
   */
  async function startScheduled(
    profile: string,
    store: CronStore,
    key: string,
    job: CronJob,
    now: number,
    occurrence: Occurrence,
  ): Promise<void> {
    const ahead = new Set<string>();
    const scheduled = { schedule: job.schedule, ahead, skipped: 0 };
    scheduledRuns.set(key, scheduled);
    awaitedHolds.delete(key);
    await holdAhead(profile, job, [occurrence.advancedTo], ahead, now);
    launch(
      profile,
      store,
      job,
      job.prompt,
      "schedule",
      () => {
        scheduledRuns.delete(key);
        if (scheduled.skipped > 0)
          logger.info(
            { job: job.id, profile, skipped: scheduled.skipped },
            `[cron] ${job.name}${inProfile(profile)}: the previous scheduled run ended; ${scheduled.skipped === 1 ? "1 occurrence was" : `${scheduled.skipped} occurrences were`} skipped while it ran`,
          );
        // A due time held ahead that has not come yet goes back: whichever instance claims it runs it
        // (not given back, it lapses within a minute).
        for (const dueAt of ahead)
          if (nextRunTime(dueAt) > clock.now())
            void options.release?.(profile, job.id, dueAt).catch(() => {});
      },
      undefined,
      occurrence,
    );
  }

  /**
   * A due time another instance holds ahead (its run of the job went on as the time came) is awaited: when
   * that instance dies mid-run its hold lapses within a minute, and the occurrence must run somewhere. Not
   * awaited when the due time is taken for a run, or past the job's next due time.
   */
  async function awaitHold(
    profile: string,
    key: string,
    job: CronJob,
    dueAt: string,
    nextRun: string,
  ): Promise<void> {
    if (options.heldAhead === undefined) return;
    const held = await options.heldAhead(profile, job.id, dueAt).catch(() => false);
    if (!held) return;
    // A hold lapses a minute after its last claim; a little more, then the occurrence is given up.
    const until = Math.min(nextRunTime(dueAt) + HOLD_WAIT_MS, nextRunTime(nextRun));
    awaitedHolds.set(key, { dueAt, until });
  }

  /**
   * The awaited holds of this profile's jobs claimed again: a due time won now (its holder died mid-run,
   * its hold lapsed) starts its run here, once; one taken for a run, or past its wait, is no longer awaited.
   */
  async function runLapsedHolds(
    profile: string,
    store: CronStore,
    records: readonly JobRecord[],
    now: number,
  ): Promise<string[]> {
    const started: string[] = [];
    if (options.claim === undefined || awaitedHolds.size === 0) return started;
    for (const [key, { dueAt, until }] of [...awaitedHolds]) {
      const [owner, jobId] = key.split("\0") as [string, string];
      if (owner !== profile) continue;
      const found = records.find((record) => record.ok && record.job.id === jobId);
      const job = found?.ok === true ? found.job : undefined;
      // Removed, paused, edited since, its next occurrence come, the wait over or the stop begun: not run.
      if (
        job === undefined ||
        job.state !== "enabled" ||
        job.next_run === undefined ||
        !(nextRunTime(job.next_run) > now) ||
        now > until ||
        ended ||
        draining ||
        scheduledRuns.has(key)
      ) {
        awaitedHolds.delete(key);
        continue;
      }
      let won: boolean;
      try {
        won = await options.claim(profile, jobId, dueAt, false, dueTimeAfter(job.schedule, dueAt));
      } catch {
        continue; // Redis unreachable: asked again at the next check, within the wait
      }
      if (!won) {
        if (!(await options.heldAhead?.(profile, jobId, dueAt).catch(() => true))) awaitedHolds.delete(key);
        continue;
      }
      logger.info(
        { job: job.id, profile },
        `[cron] ${job.name}${inProfile(profile)}: run at ${dueAt} was held by another instance for its run of the job going on then, and that hold lapsed (the instance was killed mid-run): the run starts on this instance now`,
      );
      await startScheduled(profile, store, key, job, now, {
        dueRun: dueAt,
        advancedTo: job.next_run,
        claimedDueAt: dueAt,
      });
      started.push(job.id);
    }
    return started;
  }

  /**
   * A schedule edited by hand while the gateway runs (there is no edit command) would keep the `next_run`
   * of the old one: a daily `0 0 * * *` changed to every five minutes would first run at midnight. When a
   * job's schedule differs from the one the last tick saw and its `next_run` does not (the edit left it),
   * the next run is worked out from the new schedule, from now. A `next_run` edited with it is kept. A job
   * paused or disabled has no next run to work out: a schedule edited meanwhile is a change from the one
   * last in effect once the job is enabled again (a `next_run` edited since then is kept; one a pause removed
   * is no edit). So is a job's `state` edited by hand from paused or disabled back to enabled: a `next_run`
   * left in the past by the edits is worked out from now, not caught up.
   */
  async function followEditedSchedules(
    profile: string,
    store: CronStore,
    records: readonly JobRecord[],
    now: number,
  ): Promise<void> {
    const seen = new Set<string>();
    for (const entry of records) {
      const key = `${profile}\u0000${entry.key}`;
      seen.add(key);
      // An edit saved half-typed (an invalid record for a check or two) keeps the schedule seen before
      // it: the fix is then a change from that one.
      if (!entry.ok) continue;
      const { job } = entry;
      const before = lastSeen.get(key);
      const seenNow = { schedule: job.schedule, next_run: job.next_run };
      // While not enabled, the schedule in effect stays the one it had: an edit then takes effect on enabling.
      const inEffect = job.state === "enabled" ? seenNow : (before?.inEffect ?? seenNow);
      lastSeen.set(key, { ...seenNow, state: job.state, inEffect });
      if (before === undefined || before.next_run !== job.next_run) continue;
      if (job.state !== "enabled") continue; // resume works out its next run
      const enabledAgain = before.state !== "enabled";
      // The schedule it changed from: for a job enabled again, the one in effect before it was paused, unless
      // next_run was edited since (a pause that removed it, svc cron pause's, edited nothing).
      const from = enabledAgain ? before.inEffect : before;
      const rescheduled =
        from.schedule !== job.schedule && (job.next_run === undefined || from.next_run === job.next_run);
      // Paused or disabled by hand and enabled again by hand, its next_run left as it was: one that passed
      // meanwhile is no run missed while the gateway was down, and is not caught up (as svc cron resume).
      const reenabled = enabledAgain && job.next_run !== undefined && !(nextRunTime(job.next_run) > now);
      if (!rescheduled && !reenabled) continue;
      let next: string;
      try {
        next = new Date(nextRunAfter(job.schedule, now)).toISOString();
      } catch {
        continue; // an invalid schedule makes an invalid record, reported above
      }
      logger.info(
        { job: job.id, profile },
        rescheduled
          ? `[cron] ${job.name}${inProfile(profile)}: schedule changed from "${from.schedule}" to "${job.schedule}"; the next run is ${next}`
          : `[cron] ${job.name}${inProfile(profile)}: enabled again in ${store.path}; its next run (${job.next_run}) passed while it was ${before.state} and is not caught up: the next run is ${next}`,
      );
      const worked = { schedule: job.schedule, next_run: next };
      lastSeen.set(key, { ...worked, state: job.state, inEffect: worked });
      await record(store, job.id, (current) =>
        current.schedule === job.schedule && current.next_run === job.next_run && current.state === "enabled"
          ? { ...current, next_run: next }
          : current,
      );
    }
    for (const key of lastSeen.keys())
      if (key.startsWith(`${profile}\u0000`) && !seen.has(key)) lastSeen.delete(key);
  }

  /**
   * The clock set back by `stepMs` while the gateway runs (an NTP step): each enabled job's next run, worked
   * out on the clock before the step, would leave the hours stepped over without a run (a `*\/15` job idle
   * for two hours). It is moved back by the step: an interval keeps its spacing, a cron expression takes
   * its first time from there (looked for a tick earlier, as the step is known to within a tick), so a
   * job at a fixed time that already ran is not run again when the clock comes round to it.
   */
  async function followClockStep(
    store: CronStore,
    records: readonly JobRecord[],
    now: number,
    stepMs: number,
  ): Promise<void> {
    const moved = new Map<string, { from: string; to: string }>();
    for (const entry of records) {
      if (!entry.ok || entry.job.state !== "enabled") continue;
      const { job } = entry;
      const from = job.next_run;
      const at = from === undefined ? Number.NaN : nextRunTime(from);
      if (from === undefined || !(at > now)) continue;
      let next: number;
      try {
        const schedule = parseSchedule(job.schedule);
        next =
          schedule.kind === "interval"
            ? at - stepMs
            : nextRunAfter(
                job.schedule,
                runsOnTheNewClock(schedule.expression) ? now : Math.max(now, at - stepMs - tickMs - 1),
              );
      } catch {
        continue; // an invalid schedule makes an invalid record, reported above
      }
      if (next < at) moved.set(job.id, { from, to: new Date(next).toISOString() });
    }
    if (moved.size === 0) return;
    if (stepBackLine !== undefined) logger.warn(stepBackLine);
    stepBackLine = undefined;
    try {
      await store.update((jobs) => {
        for (const [id, { from, to }] of moved) {
          const job = jobs[id];
          // A job whose next run was changed meanwhile (svc cron resume, a hand edit) keeps it.
          if (job !== undefined && job.next_run === from) jobs[id] = { ...job, next_run: to };
        }
      });
    } catch (err) {
      logger.error(
        { err: storeProblem(err) },
        `[cron] the next runs moved back with the clock could not be written to ${store.path} (${storeProblem(err)}); its jobs run at the times they had`,
      );
    }
  }

  /**
   * A record edited by hand into an invalid one never runs: logged once with its file, key and problem
   * (the store is read every second), again when its problem changes.
   */
  function reportInvalid(profile: string, records: readonly JobRecord[]): void {
    const seen = new Set<string>();
    for (const record of records) {
      if (record.ok) continue;
      const key = `${profile}\u0000${record.key}`;
      const message = `[cron] ${record.name ?? record.key}${inProfile(profile)}: ${invalidJobMessage(record, removeCommand(profile))}; until then it does not run`;
      seen.add(key);
      if (badRecords.get(key) === message) continue;
      badRecords.set(key, message);
      logger.error({ job: record.key, profile }, message);
    }
    for (const key of badRecords.keys())
      if (key.startsWith(`${profile}\u0000`) && !seen.has(key)) badRecords.delete(key);
  }

  /**
   * A `last_run` edited by hand into one svc cannot read: left out (the job runs on its schedule), logged
   * once with its file, key and problem, again when its problem changes; a run's own `last_run` replaces it.
   */
  function reportLastRuns(profile: string, records: readonly JobRecord[]): void {
    const seen = new Set<string>();
    for (const record of records) {
      if (!record.ok || record.lastRunProblem === undefined) continue;
      const key = `${profile}\u0000${record.key}`;
      const message = `[cron] ${record.job.name}${inProfile(profile)}: ${record.lastRunProblem}; the job runs on its schedule all the same`;
      seen.add(key);
      if (badLastRuns.get(key) === message) continue;
      badLastRuns.set(key, message);
      logger.warn({ job: record.key, profile }, message);
    }
    for (const key of badLastRuns.keys())
      if (key.startsWith(`${profile}\u0000`) && !seen.has(key)) badLastRuns.delete(key);
  }

  /**
   * An enabled job whose target cannot deliver (a platform not enabled, no recipient): its runs would
   * spend an agent run each and fail at the delivery. Said once, again when the job's target changes.
   */
  function reportTargets(profile: string, path: string, records: readonly JobRecord[]): void {
    if (options.targetProblems === undefined) return;
    const seen = new Set<string>();
    for (const record of records) {
      if (!record.ok || record.job.state !== "enabled") continue;
      const { job } = record;
      const key = `${profile}\u0000${job.id}`;
      seen.add(key);
      const target = `${job.deliver}\u0000${JSON.stringify(job.deliver_extra)}`;
      const version = options.targetsVersion?.();
      const checked = checkedTargets.get(key);
      if (checked?.target === target && checked.version === version) continue;
      checkedTargets.set(key, { target, version });
      for (const problem of options.targetProblems(job))
        logger.warn(
          { job: job.id, profile },
          `[cron] ${job.name}${inProfile(profile)}: ${path}: jobs.${job.id}.${problem}`,
        );
    }
    for (const key of checkedTargets.keys())
      if (key.startsWith(`${profile}\u0000`) && !seen.has(key)) checkedTargets.delete(key);
  }

  /**
   * Claims due times of a job whose scheduled run goes on here (with a shared state), noting them in
   * `ahead`; one another instance took already stays its own. Not said when the shared state is
   * unreachable: the due time is claimed again when it comes.
   */
  async function holdAhead(
    profile: string,
    job: CronJob,
    dueTimes: readonly string[],
    ahead: Set<string>,
    now: number,
  ): Promise<void> {
    if (options.claim === undefined) return;
    for (const dueAt of dueTimes) {
      if (ahead.has(dueAt)) continue;
      if (nextRunTime(dueAt) <= now) {
        // Come already (the occurrence skipped now): kept as a run's due time, not held a minute.
        await options
          .claim(profile, job.id, dueAt, false, dueTimeAfter(job.schedule, dueAt))
          .catch(() => false);
        continue;
      }
      if (await options.claim(profile, job.id, dueAt, true).catch(() => false)) ahead.add(dueAt);
    }
  }

  /**
   * The due times held ahead by this profile's runs in progress, claimed again (they lapse unless
   * renewed); one that has passed (skipped) is claimed a last time as a run's due time is, kept as long
   * (past the clock skew the leases allow): with a hold's minute, an instance whose clock runs further
   * behind than that found it lapsed when it came to it, and ran the skipped occurrence.
   */
  async function renewHeld(profile: string, now: number): Promise<void> {
    if (options.claim === undefined) return;
    for (const [key, { schedule, ahead }] of scheduledRuns) {
      const [owner, jobId] = key.split("\u0000") as [string, string];
      if (owner !== profile) continue;
      for (const dueAt of ahead) {
        const passed = nextRunTime(dueAt) <= now;
        await options
          .claim(profile, jobId, dueAt, !passed, passed ? dueTimeAfter(schedule, dueAt) : undefined)
          .catch(() => false);
        if (passed) ahead.delete(dueAt);
      }
    }
  }

  /**
   * The due time a scheduled run claims among instances: its `next_run`, or for a catch-up (this instance
   * was away past later due times) the schedule's latest, which another instance may have run meanwhile:
   * its store's own missed one may be older than the lease (24 h) another instance took for it. For an
   * interval, the latest of `next_run` and every interval after it.
   */
  function dueTime(schedule: string, nextRun: string, now: number): string {
    let latest: number | undefined;
    try {
      latest = lastRunAtOrBefore(schedule, now, nextRunTime(nextRun));
    } catch {
      return nextRun;
    }
    return latest !== undefined && latest > nextRunTime(nextRun) ? new Date(latest).toISOString() : nextRun;
  }

  /**
   * The runs a catch-up won among instances stands for (`missed`, counted from the store's `next_run`, and
   * the first of them): the due times up to now that no instance claimed, those after the latest due time
   * before `dueAt` (the one claimed now) that one did — other instances ran the job while this one was away.
   * The due times before `dueAt` are worked out from the schedule and read latest first, only as far back as
   * their claims may still be kept. Counted from `next_run` when none of them is claimed; `lapsedAfterMs`
   * when some of those could have had a claim that lapsed (kept that long), not read; `unreadable` (Redis's
   * error) when the claims cannot be read.
   */
  async function unclaimed(
    profile: string,
    job: CronJob,
    nextRun: string,
    dueAt: string,
    missed: number,
    now: number,
  ): Promise<{ missed: number; since: string; lapsedAfterMs?: number; unreadable?: string }> {
    if (options.claimedDueTimes === undefined) return { missed, since: nextRun };
    const from = nextRunTime(nextRun);
    const schedule = job.schedule;
    // Latest first, from the one before `dueAt` back to `next_run`; taken only as far as they are read.
    function* dueTimes(): Generator<{ dueAt: string; nextDueAt: string }> {
      let after = nextRunTime(dueAt);
      for (;;) {
        const at = lastRunAtOrBefore(schedule, after - 1, from);
        if (at === undefined || !(at >= from) || !(at < after)) return;
        yield { dueAt: new Date(at).toISOString(), nextDueAt: new Date(after).toISOString() };
        after = at;
      }
    }
    try {
      const read = await options.claimedDueTimes(profile, job.id, dueTimes(), now);
      if (read.latest !== undefined) {
        const first = nextRunAfter(schedule, Date.parse(read.latest));
        return { missed: occurrencesBetween(schedule, first, now), since: new Date(first).toISOString() };
      }
      return read.unread === undefined
        ? { missed, since: nextRun }
        : { missed, since: nextRun, lapsedAfterMs: read.unread.keptMs };
    } catch (err) {
      return { missed, since: nextRun, unreadable: (err as Error).message };
    }
  }

  /**
   * The schedule's due time after `dueAt` (undefined for a schedule that cannot be read): a claim is kept
   * only for about the time between the two, not a day, so a job `every 1s` keeps a few hundred keys.
   */
  function dueTimeAfter(schedule: string, dueAt: string): string | undefined {
    try {
      return new Date(nextRunAfter(schedule, nextRunTime(dueAt))).toISOString();
    } catch {
      return undefined;
    }
  }

  /**
   * Whether this instance won the job's due time (false, logged, when the shared state is unreachable or
   * refuses). A catch-up (the store's next run older than the due time claimed) that another instance took is
   * said at INFO: this instance runs none, also after a start that said its run cut off by a kill runs again.
   */
  async function claimed(profile: string, job: CronJob, dueAt: string): Promise<boolean> {
    try {
      const won =
        (await options.claim?.(profile, job.id, dueAt, false, dueTimeAfter(job.schedule, dueAt))) ?? true;
      if (!won && job.next_run !== undefined && job.next_run !== dueAt)
        logger.info(
          { job: job.id, profile },
          `[cron] ${job.name}${inProfile(profile)}: no catch-up run here — the schedule's latest due time ${dueAt} (this store's next run was ${job.next_run}) was taken by another instance sharing the state, which runs the job meanwhile`,
        );
      else if (!won)
        logger.debug(
          { job: job.id, profile },
          `[cron] ${job.name}${inProfile(profile)}: run at ${dueAt} taken by another instance`,
        );
      return won;
    } catch (err) {
      logger.error(
        { job: job.id, profile, err: (err as Error).message },
        `[cron] ${job.name}${inProfile(profile)}: not run at ${dueAt} — the shared state did not take its claim (${(err as Error).message})`,
      );
      return false;
    }
  }

  /** Said once, by the first profile with a job whose next run the step moves: a gateway without one says nothing. */
  let stepBackLine: string | undefined;

  async function tick(): Promise<string[]> {
    const now = clock.now();
    // Ticks are a tick apart: one that finds the clock behind the last one's time, it was set back by
    // (about) the difference and a tick.
    const stepBackMs = lastTickAt !== undefined && now < lastTickAt ? lastTickAt + tickMs - now : 0;
    // One that finds the wall clock moved on further than the time that passed (an NTP step forward, a
    // machine resumed from sleep) meets the jobs due meanwhile as a start does: caught up, then from now.
    const elapsed = clock.elapsed?.();
    const stepForwardMs =
      lastTickAt === undefined || elapsed === undefined || lastTickElapsed === undefined
        ? 0
        : now - lastTickAt - (elapsed - lastTickElapsed);
    const checkedSince = stepForwardMs > tickMs ? undefined : (lastTickAt ?? startedAt);
    lastTickAt = now;
    lastTickElapsed = elapsed;
    stepBackLine =
      stepBackMs > 0
        ? `[cron] the clock was set back by about ${Math.round(stepBackMs / 1000)} s (to ${new Date(now).toISOString()}): the jobs' next runs are moved back with it`
        : undefined;
    const started: string[] = [];
    for (const profile of profiles())
      started.push(...(await tickProfile(profile, now, stepBackMs, checkedSince)));
    return started;
  }

  /**
   * While the gateway stops, its drain may outlast a held due time's minute (drain_timeout_seconds above
   * it): the jobs whose scheduled run goes on here are still ticked until their runs end or are stopped
   * (an occurrence due meanwhile skipped and held, as before the stop), so no other instance starts the
   * job over a run still going here; no other job is ticked, nor run.
   */
  let holding: unknown;
  /** Ticking only for the jobs whose scheduled run goes on here (the gateway's stop): nothing new starts. */
  let draining = false;
  function holdWhileStopping(): void {
    holding = undefined;
    draining = stopped && !launched.signal.aborted && options.claim !== undefined && scheduledRuns.size > 0;
    if (!draining) return;
    holding = clock.setTimeout(() => void tick().finally(holdWhileStopping), tickMs);
  }

  function schedule(): void {
    if (stopped) return;
    timer = clock.setTimeout(() => {
      void tick().finally(schedule);
    }, tickMs);
  }

  return {
    tick,
    fire(jobRef, event) {
      const found = firable(
        jobRef,
        event,
        (problem) => `${problem}; the sender is answered 503 and may retry`,
      );
      if ("unreadable" in found) return "unreadable";
      if ("skipped" in found) return found;
      const prompt = eventPrompt(found.job, event);
      if (options.enqueue !== undefined) {
        const fired: AcceptedEvent & FiredJob = { ...event, prompt, cronJob: jobRef };
        const taken = options.enqueue(fired);
        if (typeof taken === "boolean") return taken ? "fired" : "queue_full";
        return taken.then((ok) => (ok ? "fired" : "queue_full"));
      }
      launch(event.profile, found.store, found.job, prompt, firedTrigger(event), undefined, firedBy(event));
      return "fired";
    },
    async runFired(run, signal, slot) {
      // The job the event fired (a run saved by an older version names none: its route's, as it is now).
      const jobRef = run.cronJob ?? run.route.cron_job;
      const found =
        jobRef === undefined
          ? undefined
          : firable(
              jobRef,
              run,
              // What it did first: the history's NOTE keeps only the first 200 characters of it.
              (problem) =>
                options.forget === undefined
                  ? `event dropped: ${problem}`
                  : `event dropped, its delivery ID forgotten (the sender's retry is taken once the store can be read): ${problem}`,
            );
      if (found === undefined) return NOT_RUN;
      if ("unreadable" in found) {
        options.forget?.(run);
        options.dropped?.(run, found.unreadable);
        return NOT_RUN;
      }
      if ("skipped" in found) {
        options.dropped?.(run, found.skipped);
        return NOT_RUN;
      }
      const error = await execute(
        run.profile,
        found.store,
        found.job,
        run.prompt,
        firedTrigger(run),
        signal,
        firedBy(run, { slot, run }),
      );
      if (error === INTERRUPTED) {
        // Its agent ended by the stop's own signal: kept, and the event fires the job again at the next start
        // (a run the drain cut short is saved by the run queue itself).
        if (!signal.aborted)
          throw new RunKeptForRestart(`[cron] ${found.job.name}: interrupted by the gateway's stop`);
        throw new LoggedError("interrupted by the gateway's stop before it finished");
      }
      // Failed as its last_run says: the event's run in the delivery history and the run metrics too. Its
      // notice delivered as the stop came, it ended all the same: not saved to run again.
      if (error !== undefined) {
        const failed = new LoggedError(error);
        throw signal.aborted ? new RunFailedAtStop(failed) : failed;
      }
      return undefined;
    },
    givenUp(run, error) {
      const fields = {
        route: run.routeName,
        delivery_id: run.deliveryId,
        job: run.cronJob,
        profile: run.profile,
      };
      let store: CronStore;
      let found: ReturnType<typeof findJob>;
      try {
        store = stores.store(run.profile);
        found = findJob(currentRecords(run.profile, store), run.cronJob);
      } catch (err) {
        logger.error({ ...fields, err: storeProblem(err) }, "[cron] could not record the job's run");
        return;
      }
      // Removed since (or edited by hand into a record the gateway cannot run): nothing to record it on.
      if (found === undefined || !found.ok) return;
      const at = new Date(clock.now()).toISOString();
      lastRuns.record(store, found.job.id, { at, status: "error", trigger: firedTrigger(run), error });
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
      await lastRuns.idle();
    },
    abortRuns() {
      launched.abort();
      if (holding !== undefined) clock.clearTimeout(holding);
      holding = undefined;
      draining = false;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      ended = false;
      dueAgainKeys.clear();
      startedAt ??= clock.now();
      if (holding !== undefined) clock.clearTimeout(holding);
      holding = undefined;
      draining = false;
      schedule();
    },
    stop() {
      const wasStopped = stopped;
      stopped = true;
      if (!wasStopped) ended = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      if (!wasStopped) holdWhileStopping();
    },
  };
}

/**
 * The scheduler's place under the root system: started with it; `{type: "stop"}` ends the schedule (the
 * gateway's stop, before it waits for runs in flight) and so does stopping the actor.
 */
export function cronActor(scheduler: CronScheduler) {
  return fromCallback<{ type: "stop" }>(({ receive }) => {
    scheduler.start();
    receive((event) => {
      if (event.type === "stop") scheduler.stop();
    });
    return () => scheduler.stop();
  });
}

/** The delivery ID a failed run's notice named, by its failure: the `run failed` line gives it. */
const noticedAs = new WeakMap<object, string>();

/**
 * Runs a job's prompt with the configured agent, as its profile, and delivers the reply to the job's target;
 * fired by a `mirror_to_session` route, a chat reply is also mirrored as `[Webhook delivery: <route>]`.
 */
export async function runCronJob(
  deps: { runner: AgentRunner; deliverer: Deliverer },
  job: CronJob,
  prompt: string,
  trigger: string,
  profile: string = DEFAULT_PROFILE,
  signal: AbortSignal = new AbortController().signal,
  firedBy?: FiredBy,
): Promise<string> {
  // Made before (kept with the shared queue's job while its delivery waited to retry): delivered as it is.
  const made = firedBy?.slot?.madeReply;
  // Unique per run, also for two fires of the job in the same millisecond (a burst of events on a
  // cron_job route): targets de-duplicate a delivery's parts by route and delivery id (Matrix's
  // transaction id, Discord's nonce, ...), so a shared id would drop the second run's reply. A reply made
  // before keeps the id it was first sent under, so a part whose answer was lost then is not posted twice
  // (a reply kept by a version that did not store the id goes out under a new one).
  const deliveryId = made?.deliveryId ?? `cron-${job.id}-${Date.now()}-${randomBytes(4).toString("hex")}`;
  let reply: string;
  let failure: unknown;
  if (made !== undefined) {
    reply = made.text;
    // The failure's notice, made where the agent ran: it named the delivery as a notice made here would.
    if (made.failed !== undefined) {
      const failed = new Error(made.failed);
      noticedAs.set(failed, firedBy?.deliveryId ?? deliveryId);
      failure = failed;
    }
  } else
    try {
      const answer = await deps.runner.run(
        {
          route: `cron:${job.name}`,
          event: trigger,
          deliveryId,
          prompt,
          toolsets: DEFAULT_WEBHOOK_TOOLSETS,
          profile: namedProfile(profile),
        },
        signal,
      );
      reply = answer.text;
    } catch (err) {
      // A failed model run is delivered as a notice to the job's target, then fails the job. A public
      // target's notice names the delivery the history lists it under (a fired job's: its event's), and the
      // `[cron] <job>: run failed` line carries that ID too.
      const listedAs = firedBy?.deliveryId ?? deliveryId;
      const notice = signal.aborted ? undefined : failureNotice(err, job.deliver, listedAs);
      if (notice !== undefined && typeof err === "object" && err !== null) noticedAs.set(err, listedAs);
      if (notice === undefined) throw err;
      reply = notice.text;
      failure = err;
    }
  firedBy?.slot?.replied?.(keptReply({ text: reply, deliveryId }, failure));
  try {
    await deps.deliverer.deliver(
      {
        target: job.deliver,
        message: {
          text: reply,
          extra: job.deliver_extra,
          // Sent as written: a job has no payload, so no value is a template it left unfilled (`{team}`).
          unfilled: [],
          route: `cron:${job.name}`,
          deliveryId,
          profile: namedProfile(profile),
        },
        mode: "agent",
        mirrorToSession: firedBy?.mirrorToSession === true,
        ...(firedBy === undefined
          ? {}
          : {
              mirrorRoute: firedBy.route,
              recordedAs: { route: firedBy.route, deliveryId: firedBy.deliveryId },
              slot: firedBy.slot,
              run: firedBy.run,
            }),
      },
      signal,
    );
  } catch (err) {
    // A failed run's notice its target refused is that delivery's failure (logged and recorded as such by
    // the deliverer), not the run's: the run failed as the model did, as a webhook route's run does.
    if (failure === undefined || signal.aborted) throw err;
  }
  // A notice delivered as the stop came (a mail some recipients got, its retry for the others cut short)
  // ended the run: failed, not interrupted.
  if (failure !== undefined) throw signal.aborted ? new RunFailedAtStop(failure) : failure;
  return reply;
}

/**
 * No store file any more: its jobs were removed while one ran, with the whole profile (`rm -rf
 * profiles/work`) or the file. What the run leaves (its `last_run`) is not written then: the write would make
 * the file again, empty, and with it the profile's directory.
 */
function storeGone(store: CronStore): boolean {
  return store.revision() === "";
}

import { existsSync } from "node:fs";
import {
  type CronClock,
  type CronScheduler,
  type CronSchedulerOptions,
  createCronScheduler,
  cronActor,
  runCronJob,
} from "../actors/cron.js";
import type { Deliverer } from "../actors/deliver.js";
import type { QueuedRun } from "../actors/runs.js";
import type { GatewaySystem } from "../actors/system.js";
import { UndeliveredReply } from "../actors/undeliveredReply.js";
import { inProfile, type SvcPaths } from "../config/paths.js";
import type { CronRunNote, CronRunNotes } from "../io/cronRunNotes.js";
import type { Logger } from "../io/log.js";
import { existingProfiles } from "../io/profiles.js";
import { storeProblem } from "../io/stores/atomicFile.js";
import { type CronJob, cronStore, nextRunTime } from "../io/stores/cronStore.js";
import { unusableCronStore } from "../io/stores/unusableCronStore.js";
import type { AcceptedEvent } from "../streams/context.js";
import type { Agent } from "./agent.js";
import type { ProfileResources } from "./profileResources.js";

export interface CronDeps {
  readonly system: GatewaySystem;
  readonly paths: SvcPaths;
  readonly logger: Logger;
  readonly clock: CronClock;
  readonly agent: Agent;
  readonly deliverer: Deliverer;
  readonly profiles: ProfileResources;
  /** Jobs fired by webhook events share the agent runs' bound (agent.max_concurrent_runs) and queue. */
  readonly enqueue: (event: AcceptedEvent) => boolean | Promise<boolean>;
  /** A fired job's event dropped at its turn in the queue, with why (`CronSchedulerOptions.dropped`). */
  readonly dropped?: ((run: QueuedRun, why: string) => void) | undefined;
  /** Forgets the delivery ID of a fired job's event dropped at its turn for an unreadable store. */
  readonly forget?: ((run: QueuedRun) => void) | undefined;
  /** Times each scheduled run into the run metrics (runs from the queue are timed there). */
  readonly timeRun?: (run: () => Promise<void>) => Promise<void>;
  /** Several gateways sharing state (Redis): a due time runs only on the instance that claims it. */
  readonly claim?: ((profile: string, jobId: string, dueAt: string) => Promise<boolean>) | undefined;
  /** Gives back a due time claimed ahead of time while a run went on. */
  readonly release?: ((profile: string, jobId: string, dueAt: string) => Promise<void>) | undefined;
  /** Whether a due time not won is only held ahead by another instance (its run went on), or free by now. */
  readonly heldAhead?: ((profile: string, jobId: string, dueAt: string) => Promise<boolean>) | undefined;
  /** The latest due time of a job some instance claimed, still kept: a catch-up counts as missed only the later ones. */
  readonly claimedDueTimes?: CronSchedulerOptions["claimedDueTimes"] | undefined;
  /** What this process's claims hold: noted with each scheduled run it claimed (`recordCutOffRuns`). */
  readonly claimHolder?: string | undefined;
  /** A job's target problems under the gateway's config (logged once per job by the scheduler). */
  readonly targetProblems?: (job: CronJob) => readonly string[];
  /** The config `targetProblems` judges by: a reload's new one checks every job again. */
  readonly targetsVersion?: () => unknown;
  /** Notes each scheduled run while it goes on, for the start after a SIGKILL (`recordCutOffRuns`). */
  readonly runNotes?: CronRunNotes;
  /** Whether the gateway's stop began within a moment of now (`RunQueue.stopNear`). */
  readonly stopNear?: () => Promise<boolean>;
}

export interface Cron {
  readonly scheduler: CronScheduler;
  /** Starts the schedule, as the `cron` actor: once the gateway has started (a stop during its start has none). */
  start(): void;
  /** Ends the schedule (no new scheduled run starts), through the `cron` actor's `stop` event. */
  stop(): void;
}

/** The cron scheduler over every profile's store, started and stopped as the `cron` actor. */
export function createCron(deps: CronDeps): Cron {
  const { paths, profiles } = deps;
  const scheduler = createCronScheduler({
    stores: {
      profiles: () => existingProfiles(paths.home),
      store: (profile) => cronStore(profiles.paths(profile).cronJobs),
      unusable: (profile) => unusableCronStore(paths.home, profile),
    },
    logger: deps.logger,
    clock: deps.clock,
    runJob: async (job, prompt, trigger, profile, signal, firedBy) => {
      // The agent's reply, kept when its delivery fails (the run's failure carries it to the log line).
      let answered: string | undefined;
      const runner = deps.agent.runner();
      const answering: typeof runner = {
        run: async (request, runSignal) => {
          const reply = await runner.run(request, runSignal);
          answered = reply.text;
          return reply;
        },
      };
      try {
        return await runCronJob(
          { runner: answering, deliverer: deps.deliverer },
          job,
          prompt,
          trigger,
          profile,
          signal,
          firedBy,
        );
      } catch (err) {
        throw answered === undefined ? err : new UndeliveredReply(answered, err);
      }
    },
    enqueue: deps.enqueue,
    ...(deps.dropped === undefined ? {} : { dropped: deps.dropped }),
    ...(deps.forget === undefined ? {} : { forget: deps.forget }),
    ...(deps.timeRun === undefined ? {} : { timeRun: deps.timeRun }),
    ...(deps.claim === undefined ? {} : { claim: deps.claim }),
    ...(deps.release === undefined ? {} : { release: deps.release }),
    ...(deps.heldAhead === undefined ? {} : { heldAhead: deps.heldAhead }),
    ...(deps.claimedDueTimes === undefined ? {} : { claimedDueTimes: deps.claimedDueTimes }),
    ...(deps.claimHolder === undefined ? {} : { claimHolder: deps.claimHolder }),
    ...(deps.targetProblems === undefined ? {} : { targetProblems: deps.targetProblems }),
    ...(deps.targetsVersion === undefined ? {} : { targetsVersion: deps.targetsVersion }),
    ...(deps.runNotes === undefined ? {} : { runNotes: deps.runNotes }),
    ...(deps.stopNear === undefined ? {} : { stopNear: deps.stopNear }),
  });
  let ref: { send(event: { type: "stop" }): void } | undefined;
  return {
    scheduler,
    start: () => {
      // A schedule that fails (a store that throws at start) is started again, a few times.
      ref ??= deps.system.spawn("cron", cronActor(scheduler), undefined, { restart: "on-error", max: 3 });
    },
    stop: () => ref?.send({ type: "stop" }),
  };
}

/**
 * The note of a run whose due time the killed process claimed from other instances, as the start may catch
 * it up: its occurrence kept when that claim was given back, left out (an error, not run again) when not.
 */
async function withClaimGivenBack(
  run: CronRunNote,
  releaseClaim:
    | ((profile: string, jobId: string, dueAt: string, holder: string) => Promise<boolean>)
    | undefined,
  now: number,
): Promise<CronRunNote> {
  if (run.claimedDueAt === undefined) return run;
  const { dueRun: _d, advancedTo: _a, ...without } = run;
  if (run.claimHolder === undefined || releaseClaim === undefined) return without;
  const released = await releaseClaim(run.profile, run.jobId, run.claimedDueAt, run.claimHolder).catch(
    () => false,
  );
  // The next due time, held ahead while the run went on (the other instances keep off it a minute):
  // still to come, it is given back too, or it would be run late or not at all once the hold lapsed.
  if (run.advancedTo !== undefined && nextRunTime(run.advancedTo) > now)
    await releaseClaim(run.profile, run.jobId, run.advancedTo, run.claimHolder).catch(() => false);
  return released ? run : without;
}

/**
 * Records the scheduled runs a killed gateway cut short (noted while they ran, `io/cronRunNotes.ts`): in the
 * middle of its agent or of its delivery's retries, such a run left no trace, as it is not journaled (its
 * job's next_run moved on before it started). As a run the gateway's stop ended, it is recorded
 * `interrupted` and its occurrence is due again: `next_run` back to its due time (unless edited since), so
 * the scheduler runs it once as a catch-up. With several instances (Redis) the due time the killed process
 * claimed is given back first (`releaseClaim`, by the holder its note names: that process is gone), so this
 * start may claim it again. An occurrence already interrupted once (the catch-up itself cut off: a run that
 * kills its gateway, by memory, must not do so at every start) and a run whose claim could not be given back
 * (lapsed or taken since, Redis unreachable, or noted without its holder) are recorded as an error and not
 * run again. Each job's `last_run` says so (unless a run recorded since is newer), and a WARN line.
 */
export async function recordCutOffRuns(
  deps: Pick<CronDeps, "logger" | "clock" | "profiles"> & {
    /** Gives back a due time a gone process of this SVC_HOME claimed; true when it still held it. */
    readonly releaseClaim?:
      | ((profile: string, jobId: string, dueAt: string, holder: string) => Promise<boolean>)
      | undefined;
  },
  runs: readonly CronRunNote[],
): Promise<void> {
  for (const noted of runs) {
    const run = await withClaimGivenBack(noted, deps.releaseClaim, deps.clock.now());
    const started = new Date(run.startedAt).toISOString();
    const label = (name: string) => `[cron] ${name}${inProfile(run.profile)}`;
    let name = run.jobId;
    // Nothing to say of a job removed since, nor of a run its gateway's stop recorded after all.
    let recorded: "error" | "again" | "interrupted" | undefined;
    const file = deps.profiles.paths(run.profile).cronJobs;
    // A store (or profile) removed since: nothing to record it in, and nothing to make again.
    if (!existsSync(file)) continue;
    try {
      await cronStore(file).update((jobs) => {
        const job = jobs[run.jobId];
        if (job === undefined) return; // removed since: nothing to record it on
        name = job.name;
        const last = job.last_run;
        if (last !== undefined && !(Date.parse(last.at) < run.startedAt)) return;
        const at = new Date(deps.clock.now()).toISOString();
        const { dueRun, advancedTo } = run;
        // Interrupted (by a stop or a kill) after it came due: this run was that occurrence's catch-up.
        const twice =
          last?.status === "interrupted" && dueRun !== undefined && Date.parse(last.at) > Date.parse(dueRun);
        if (dueRun === undefined || advancedTo === undefined || twice) {
          jobs[run.jobId] = {
            ...job,
            last_run: {
              at,
              status: "error",
              trigger: run.trigger,
              error: `cut off: the gateway running it was killed (the run started at ${started})${twice ? "; it was the catch-up of a run interrupted before" : ""}`,
            },
          };
          recorded = "error";
          return;
        }
        const again = job.next_run === advancedTo;
        jobs[run.jobId] = {
          ...job,
          last_run: { at, status: "interrupted", trigger: run.trigger },
          ...(again ? { next_run: dueRun } : {}),
        };
        recorded = again ? "again" : "interrupted";
      });
    } catch (err) {
      deps.logger.error(
        { job: run.jobId, profile: run.profile, err: storeProblem(err) },
        `${label(name)}: its scheduled run (started ${started}) did not finish — the gateway running it was killed; not run again, and not recorded in last_run: ${storeProblem(err)}`,
      );
      continue;
    }
    if (recorded === undefined) continue;
    const fields = { job: run.jobId, profile: run.profile, trigger: run.trigger };
    const killed = `${label(name)}: its scheduled run (started ${started}) did not finish — the gateway running it was killed`;
    deps.logger.warn(
      fields,
      recorded === "again"
        ? `${killed}; recorded in last_run as interrupted, and it runs again now, as a missed run does (once: cut off again, it is not run a third time)`
        : recorded === "interrupted"
          ? `${killed}; recorded in last_run as interrupted; not run again, as its next_run was changed since (the job runs at its next_run)`
          : `${killed}; recorded in last_run as an error and not run again (the job runs at its next scheduled time)`,
    );
  }
}

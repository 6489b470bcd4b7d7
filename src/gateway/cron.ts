import {
  type CronClock,
  type CronScheduler,
  createCronScheduler,
  cronActor,
  runCronJob,
} from "../actors/cron.js";
import type { Deliverer } from "../actors/deliver.js";
import type { GatewaySystem } from "../actors/system.js";
import type { SvcPaths } from "../config/paths.js";
import type { Logger } from "../io/log.js";
import { existingProfiles } from "../io/profiles.js";
import { type CronJob, cronStore } from "../io/stores/cronStore.js";
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
  /** Times each scheduled run into the run metrics (runs from the queue are timed there). */
  readonly timeRun?: (run: () => Promise<void>) => Promise<void>;
  /** Several gateways sharing state (Redis): a due time runs only on the instance that claims it. */
  readonly claim?: ((profile: string, jobId: string, dueAt: string) => Promise<boolean>) | undefined;
  /** Gives back a due time claimed ahead of time while a run went on. */
  readonly release?: ((profile: string, jobId: string, dueAt: string) => Promise<void>) | undefined;
  /** A job's target problems under the gateway's config (logged once per job by the scheduler). */
  readonly targetProblems?: (job: CronJob) => readonly string[];
  /** The config `targetProblems` judges by: a reload's new one checks every job again. */
  readonly targetsVersion?: () => unknown;
}

export interface Cron {
  readonly scheduler: CronScheduler;
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
    },
    logger: deps.logger,
    clock: deps.clock,
    runJob: (job, prompt, trigger, profile, signal, firedBy) =>
      runCronJob(
        { runner: deps.agent.runner(), deliverer: deps.deliverer },
        job,
        prompt,
        trigger,
        profile,
        signal,
        firedBy,
      ),
    enqueue: deps.enqueue,
    ...(deps.timeRun === undefined ? {} : { timeRun: deps.timeRun }),
    ...(deps.claim === undefined ? {} : { claim: deps.claim }),
    ...(deps.release === undefined ? {} : { release: deps.release }),
    ...(deps.targetProblems === undefined ? {} : { targetProblems: deps.targetProblems }),
    ...(deps.targetsVersion === undefined ? {} : { targetsVersion: deps.targetsVersion }),
  });
  // A schedule that fails (a store that throws at start) is started again, a few times.
  const ref = deps.system.spawn("cron", cronActor(scheduler), undefined, { restart: "on-error", max: 3 });
  return { scheduler, stop: () => ref.send({ type: "stop" }) };
}

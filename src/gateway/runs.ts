import { createRunExecutor } from "../actors/agent/index.js";
import type { CronScheduler } from "../actors/cron.js";
import type { Deliverer } from "../actors/deliver.js";
import { isFire } from "../actors/firedJob.js";
import { createShutdownSaver, type ShutdownSave } from "../actors/pendingRuns.js";
import {
  type QueuedRun,
  queuedRun,
  RUN_QUEUE_CAP,
  type RunExecutor,
  RunQueue,
  type RunQueueOptions,
  type RunQueueTimers,
  runsInput,
  runsMachine,
  type StopTimers,
} from "../actors/runs.js";
import type { GatewaySystem } from "../actors/system.js";
import type { Logger } from "../io/log.js";
import { readPendingRuns, writePendingRuns } from "../io/stores/pendingRuns.js";
import type { AcceptedEvent } from "../streams/context.js";
import type { Agent } from "./agent.js";
import type { ProfileResources } from "./profileResources.js";

/**
 * The bounded FIFO of accepted agent runs (webhook events, coalesced groups, fired cron jobs). Made before
 * what feeds it and before the slots that work it off, so nothing is wired through a forward reference.
 */
export interface RunQueuePort {
  /** Queues unless `cap` runs already wait (default the gateway's); false means the event was not taken. */
  enqueue(event: AcceptedEvent, cap?: number): boolean;
  /** `enqueue`, giving the run it queued (undefined: not taken). */
  enqueueRun(event: AcceptedEvent, cap?: number): QueuedRun | undefined;
  /** Queues runs accepted before a restart (no cap: they were answered 202 long ago). */
  resume(runs: readonly QueuedRun[]): void;
  /** Takes a waiting run back out (its event was answered 503 after all); false when it is not waiting. */
  withdraw(run: QueuedRun): boolean;
  /** Runs not yet finished (running, waiting to retry their delivery, then waiting), for the stop's checkpoints. */
  unfinished(): QueuedRun[];
  /** Runs started and not finished: in a slot, or waiting to retry their delivery outside one. */
  active(): QueuedRun[];
  /** Stops starting waiting runs and hands them back (stop, past the drain timeout). */
  takeWaiting(): QueuedRun[];
  /** Stops the runs under way and returns them (stop, past the drain timeout): they run again at the next start. */
  stopActive(): QueuedRun[];
  /** Of the runs `stopActive` returned, those that did not end all the same (their reply or notice delivered). */
  stillUnfinished(runs: readonly QueuedRun[]): QueuedRun[];
  /** Waits until no run is waiting, running or waiting to retry its delivery; false when `timeoutMs` passes first. */
  drain(timeoutMs: number): Promise<boolean>;
  /** A stop's saver of unfinished runs to pending-runs.json, for the next start. */
  shutdownSaver(): ShutdownSave;
  readonly queue: RunQueue;
}

export function createRunQueue(deps: {
  cap?: number;
  timers: RunQueueTimers;
  /** What the stop's moment is measured on (`STOP_SIGNAL_WINDOW_MS`). */
  stopTimers?: StopTimers;
  pendingRunsFile: string;
  /** Runs whose delivery may wait to retry outside a run slot, and what to say when that cap is first hit. */
  retrying?: RunQueueOptions;
}): RunQueuePort {
  const queue = new RunQueue(deps.timers, { ...deps.retrying, stopTimers: deps.stopTimers });
  const defaultCap = deps.cap ?? RUN_QUEUE_CAP;
  return {
    queue,
    enqueue(event, cap = defaultCap) {
      return this.enqueueRun(event, cap) !== undefined;
    },
    enqueueRun(event, cap = defaultCap) {
      if (queue.waiting.length >= cap) return undefined;
      const run = queuedRun(event);
      queue.push(run);
      return run;
    },
    resume(runs) {
      for (const run of runs) queue.push(run);
    },
    withdraw: (run) => queue.withdraw(run),
    unfinished: () => [...queue.active, ...queue.retrying, ...queue.kept, ...queue.waiting],
    active: () => [...queue.active, ...queue.retrying, ...queue.kept],
    takeWaiting: () => queue.takeWaiting(),
    stopActive: () => queue.stopActive(),
    stillUnfinished: (runs) => queue.stillUnfinished(runs),
    drain: (timeoutMs) => queue.whenIdle(timeoutMs),
    shutdownSaver: () =>
      createShutdownSaver(readPendingRuns, writePendingRuns, deps.pendingRunsFile, (run) =>
        queue.keptDelivery(run),
      ),
  };
}

export interface RunsDeps {
  readonly system: GatewaySystem;
  readonly queue: RunQueuePort;
  /** `agent.max_concurrent_runs` (a restart-only setting). */
  readonly maxConcurrent: number;
  readonly logger: Logger;
  readonly agent: Agent;
  readonly deliverer: Deliverer;
  readonly profiles: ProfileResources;
  /** Runs a cron job fired by a webhook event, once its turn in the queue comes. */
  readonly runFiredJob: CronScheduler["runFired"];
  /** Wraps each run (the state journal records it finished). */
  readonly track?: (execute: RunExecutor) => RunExecutor;
  /** Unknown toolset names a load already warned about, per route: runs do not say them again. */
  readonly warnedToolsets?: Set<string>;
  /** The gateway runs with `--inspect`: the queue's counts are published as they change. */
  readonly inspecting?: boolean;
  /**
   * `state.backend: redis`, where the runs go through the shared queue, never through `queue`: watches its
   * counts (`RedisState.watchRunDepth`), told as they are read, every `everyMs` besides.
   */
  readonly sharedDepth?: (told: (depth: RunCounts) => void, everyMs: number) => void;
}

type RunCounts = ReturnType<RunQueue["toJSON"]>;

/**
 * How often, under `--inspect` with `state.backend: redis`, the shared queue's counts are read besides this
 * instance's own changes: runs other instances store or take change them too.
 */
export const SHARED_DEPTH_READ_MS = 1000;

/** The run slots (the `runs` actor and its `run-slot-N` children) working off the queue. */
export function createRuns(deps: RunsDeps): { readonly execute: RunExecutor } {
  const { logger, profiles } = deps;
  const executeAgentRun = createRunExecutor({
    runner: deps.agent.runner,
    deliverer: deps.deliverer,
    logger,
    skillsDir: (profile) => profiles.paths(profile).skills,
    recordRun: (profile, run) => profiles.runJournal(profile).record(run),
    mcpServers: deps.agent.mcpServers,
    stopNear: () => deps.queue.queue.stopNear(),
    ...(deps.warnedToolsets === undefined ? {} : { warnedToolsets: deps.warnedToolsets }),
  });
  const execute = (deps.track ?? ((run) => run))((run, signal, slot) =>
    isFire(run) ? deps.runFiredJob(run, signal, slot) : executeAgentRun(run, signal, slot),
  );
  const runs = deps.system.spawn(
    "runs",
    runsMachine,
    runsInput({ maxConcurrent: deps.maxConcurrent, logger, queue: deps.queue.queue, execute }),
  );
  if (deps.inspecting !== true) return { execute };
  const { queue } = deps.queue;
  // With Redis, the shared queue's counts as they are read, published when they differ from those shown.
  if (deps.sharedDepth !== undefined) {
    let shown = queue.toJSON();
    queue.countsShown = () => shown;
    deps.sharedDepth((depth) => {
      if (
        depth.waiting === shown.waiting &&
        depth.active === shown.active &&
        depth.retrying === shown.retrying
      )
        return;
      shown = { waiting: depth.waiting, active: depth.active, retrying: depth.retrying };
      runs.send({ type: "changed" });
    }, SHARED_DEPTH_READ_MS);
    return { execute };
  }
  // Under `--inspect` the queue's counts are published as they change, at most once a turn.
  let told = false;
  queue.onChange = () => {
    if (told) return;
    told = true;
    setImmediate(() => {
      told = false;
      runs.send({ type: "changed" });
    });
  };
  return { execute };
}

import type { PendingRun, PendingRunsFile } from "../io/stores/pendingRuns.js";
import type { ResolvedRoute } from "../streams/context.js";
import type { KeptDelivery, QueuedRun } from "./runs.js";

/** What a restart needs of an unfinished run (the route by name: its configuration may hold a secret). */
export function pendingRunOf(run: QueuedRun): PendingRun {
  const pending: PendingRun = {
    profile: run.profile,
    routeName: run.routeName,
    event: run.event,
    deliveryId: run.deliveryId,
    madeId: run.madeId,
    prompt: run.prompt,
    extra: run.extra,
    unfilled: run.unfilled,
    receivedAt: run.receivedAt,
  };
  // Only a fire's record names its job: an agent run's is written as it always was.
  return run.cronJob === undefined ? pending : { ...pending, cronJob: run.cronJob };
}

/**
 * `pendingRunOf(run)` with the reply its agent made and where its delivery stood (`kept`), as a stop saves a
 * run cut short while that reply went out: the next start delivers it from there without the agent.
 */
export function savedRunOf(run: QueuedRun, kept: KeptDelivery | undefined): PendingRun {
  const pending = pendingRunOf(run);
  if (kept === undefined) return pending;
  return kept.retry === undefined
    ? { ...pending, reply: kept.reply }
    : { ...pending, reply: kept.reply, retry: kept.retry };
}

/**
 * Saved runs whose route still exists for the same profile become queued runs with the route's current
 * configuration; the others stay saved until their route is back.
 */
export function resumablePendingRuns(
  saved: readonly PendingRun[],
  lookup: (routeName: string) => ResolvedRoute | undefined,
): { queued: QueuedRun[]; unmatched: PendingRun[] } {
  const queued: QueuedRun[] = [];
  const unmatched: PendingRun[] = [];
  for (const run of saved) {
    const found = lookup(run.routeName);
    if (found === undefined || found.profile !== run.profile) unmatched.push(run);
    else queued.push({ ...run, route: found.route });
  }
  return { queued, unmatched };
}

/** Saves the runs unfinished now; `onlyWhenNew` skips the write when the file already holds each of them. */
export type ShutdownSave = (unfinished: readonly QueuedRun[], options?: { onlyWhenNew?: boolean }) => void;

/** The reply a run made and where its delivery stands, when it made one (`RunQueue.keptDelivery`). */
export type KeptDeliveryOf = (run: QueuedRun) => KeptDelivery | undefined;

const runKey = (run: QueuedRun) => `${run.routeName}\u0000${run.deliveryId}\u0000${run.prompt.length}`;

/**
 * Writes the runs unfinished at shutdown into the pending-runs file, as often as the stop needs
 * (when it begins, after the requests still in the pipeline were answered, at the end). Each save
 * replaces the previous one: the file holds what it held before this stop (runs kept from earlier
 * starts, entries it cannot read) plus the runs unfinished now. Throws when the file cannot be written.
 * A full queue (100,000 runs with 4 KB prompts) takes seconds to write, so a save that would add no run
 * to the last one (only runs finished since, which then run again: at-least-once) can be skipped.
 */
export function createShutdownSaver(
  read: (path: string) => PendingRunsFile,
  write: (path: string, file: PendingRunsFile) => void,
  path: string,
  /** Each run's reply and delivery, saved with it (a run stopped while its reply went out). */
  kept: KeptDeliveryOf = () => undefined,
): ShutdownSave {
  let before: PendingRunsFile | undefined;
  let written: Set<string> | undefined;
  return (unfinished, options = {}) => {
    // Nothing unfinished and nothing written yet: the file stays as it is (a clean stop writes nothing).
    if (before === undefined && unfinished.length === 0) return;
    if (options.onlyWhenNew === true && written !== undefined) {
      const saved = written;
      if (unfinished.every((run) => saved.has(runKey(run)))) return;
    }
    before ??= read(path);
    write(path, {
      runs: [...before.runs, ...unfinished.map((run) => savedRunOf(run, kept(run)))],
      unreadable: before.unreadable,
    });
    written = new Set(unfinished.map(runKey));
  };
}

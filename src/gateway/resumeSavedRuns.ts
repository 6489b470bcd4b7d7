import { resumablePendingRuns } from "../actors/pendingRuns.js";
import { type PendingRun, readPendingRunsOrMoveAside, writePendingRuns } from "../io/stores/pendingRuns.js";
import type { PipelineLogHooks } from "./logHooks.js";
import type { RunQueuePort } from "./runs.js";

/**
 * Queues the runs saved at the last shutdown whose route still exists; the rest stay in the file, and so
 * do the ones `owedByJournal` names (`route:delivery id`: a local journal still owes them, and runs them
 * once the gateway runs with it again).
 */
export function resumeSavedRuns(
  file: string,
  runs: Pick<RunQueuePort, "resume">,
  lookup: Parameters<typeof resumablePendingRuns>[1],
  hooks: PipelineLogHooks,
  owedByJournal?: ReadonlySet<string>,
): void {
  const saved = readPendingRunsOrMoveAside(file, hooks.onPendingUnreadable);
  if (saved === undefined) return;
  if (saved.runs.length === 0 && saved.unreadable.length === 0) return;
  const owed = (run: PendingRun) => owedByJournal?.has(`${run.routeName}:${run.deliveryId}`) === true;
  const left = saved.runs.filter(owed);
  const { queued, unmatched } = resumablePendingRuns(
    left.length === 0 ? saved.runs : saved.runs.filter((run) => !owed(run)),
    lookup,
  );
  writePendingRuns(file, { runs: [...unmatched, ...left], unreadable: saved.unreadable });
  runs.resume(queued);
  if (queued.length > 0) hooks.onRunsResumed(queued.length, file);
  if (unmatched.length > 0) hooks.onRunsKept(unmatched, file);
}

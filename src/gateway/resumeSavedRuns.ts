import { resumablePendingRuns } from "../actors/pendingRuns.js";
import { readPendingRunsOrMoveAside, writePendingRuns } from "../io/stores/pendingRuns.js";
import type { PipelineLogHooks } from "./logHooks.js";
import type { RunQueuePort } from "./runs.js";

/** Queues the runs saved at the last shutdown whose route still exists; the rest stay in the file. */
export function resumeSavedRuns(
  file: string,
  runs: Pick<RunQueuePort, "resume">,
  lookup: Parameters<typeof resumablePendingRuns>[1],
  hooks: PipelineLogHooks,
): void {
  const saved = readPendingRunsOrMoveAside(file, hooks.onPendingUnreadable);
  if (saved === undefined) return;
  if (saved.runs.length === 0 && saved.unreadable.length === 0) return;
  const { queued, unmatched } = resumablePendingRuns(saved.runs, lookup);
  writePendingRuns(file, { runs: unmatched, unreadable: saved.unreadable });
  runs.resume(queued);
  if (queued.length > 0) hooks.onRunsResumed(queued.length, file);
  if (unmatched.length > 0) hooks.onRunsKept(unmatched, file);
}

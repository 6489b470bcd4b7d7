import { resumablePendingRuns } from "../actors/pendingRuns.js";
import type { QueuedRun } from "../actors/runs.js";
import {
  type PendingRun,
  type PendingRunsFile,
  readPendingRunsOrMoveAside,
  writePendingRuns,
} from "../io/stores/pendingRuns.js";
import type { PipelineLogHooks } from "./logHooks.js";
import type { RunQueuePort } from "./runs.js";

type Lookup = Parameters<typeof resumablePendingRuns>[1];

/**
 * The file's runs split into those to queue now (their route exists), those whose route is gone, and
 * those `owedByJournal` names (`route:delivery id`: a local journal still owes them and runs them once
 * the gateway runs with it again). Undefined when the file holds nothing.
 */
function savedRuns(
  file: string,
  lookup: Lookup,
  hooks: PipelineLogHooks,
  owedByJournal?: ReadonlySet<string>,
) {
  const saved = readPendingRunsOrMoveAside(file, hooks);
  if (saved === undefined) return undefined;
  if (saved.runs.length === 0 && saved.unreadable.length === 0) return undefined;
  const owed = (run: PendingRun) => owedByJournal?.has(`${run.routeName}:${run.deliveryId}`) === true;
  const left = saved.runs.filter(owed);
  const { queued, unmatched } = resumablePendingRuns(
    left.length === 0 ? saved.runs : saved.runs.filter((run) => !owed(run)),
    lookup,
  );
  return { saved, queued, unmatched, left };
}

function reported(
  file: string,
  hooks: PipelineLogHooks,
  queued: number,
  unmatched: readonly PendingRun[],
  lookup: Lookup,
  disabledNow?: () => ReadonlySet<string>,
) {
  if (queued > 0) hooks.onRunsResumed(queued, file);
  if (unmatched.length > 0)
    hooks.onRunsKept(unmatched, file, (name) => lookup(name)?.profile, [], disabledNow);
}

const pendingOf = ({ route: _route, ...run }: QueuedRun): PendingRun => run;

/** Queues the runs saved at the last shutdown whose route still exists (in memory); the rest stay in the file. */
export function resumeSavedRuns(
  file: string,
  runs: Pick<RunQueuePort, "resume">,
  lookup: Lookup,
  hooks: PipelineLogHooks,
): void {
  const found = savedRuns(file, lookup, hooks);
  if (found === undefined) return;
  const { saved, queued, unmatched } = found;
  writePendingRuns(file, { runs: unmatched, unreadable: saved.unreadable });
  runs.resume(queued);
  reported(file, hooks, queued.length, unmatched, lookup);
}

/**
 * The same for a shared queue (`state.backend: redis`), leaving in the file the runs `owedByJournal`
 * names as well. Each run is stored in the queue before the file lets it go, so an instance killed right
 * after its start loses none (a run held only in this process would be gone with it). A run the queue
 * could not store (Redis lost meanwhile) stays in the file for the next start; one stored twice (a crash
 * before the file was written) is one job, its id being its delivery's.
 */
export async function storeSavedRuns(
  file: string,
  store: (run: QueuedRun) => Promise<unknown>,
  lookup: Lookup,
  hooks: PipelineLogHooks,
  owedByJournal?: ReadonlySet<string>,
  /** The disabled subscriptions: a saved run of one is named so, not as one whose route is gone. */
  disabledNow?: () => ReadonlySet<string>,
): Promise<void> {
  const found = savedRuns(file, lookup, hooks, owedByJournal);
  if (found === undefined) return;
  const { saved, queued, unmatched, left } = found;
  const outcomes = await Promise.allSettled(queued.map(store));
  const unstored = queued.filter((_, i) => outcomes[i]?.status === "rejected").map(pendingOf);
  const rest: PendingRunsFile = { runs: [...unmatched, ...left, ...unstored], unreadable: saved.unreadable };
  writePendingRuns(file, rest);
  reported(file, hooks, queued.length - unstored.length, unmatched, lookup, disabledNow);
}

import {
  type PendingRun,
  type PendingRunsReport,
  readPendingRunsOrMoveAside,
  writePendingRuns,
} from "../io/stores/pendingRuns.js";
import { runKey } from "./liveState.js";
import type { StateStore } from "./store.js";

/**
 * Takes the runs of a webhook-pending-runs.json (written by a graceful stop, or by a version without the
 * journal) into the journal, and removes the file only once they are durable there: a crash while the
 * runs replay loses none of them. Runs the journal already knows (live, or finished within the hour)
 * are not taken twice. Returns the runs taken in.
 */
export async function importPendingRunsFile(
  file: string,
  known: ReadonlySet<string>,
  store: StateStore,
  report: PendingRunsReport,
): Promise<PendingRun[]> {
  const saved = readPendingRunsOrMoveAside(file, report);
  if (saved === undefined) return [];
  if (saved.runs.length === 0 && saved.unreadable.length === 0) return [];
  const taken: PendingRun[] = [];
  for (const run of saved.runs) {
    const key = runKey(run.routeName, run.deliveryId);
    if (known.has(key)) continue;
    store.runAccepted(run, run.receivedAt);
    taken.push(run);
  }
  await store.durable();
  writePendingRuns(file, { runs: [], unreadable: saved.unreadable });
  return taken;
}

import type { PendingRun } from "../io/stores/pendingRuns.js";
import type { ResolvedRoute } from "../streams/context.js";
import type { QueuedRun } from "./runs.js";

/** What a restart needs of an unfinished run (the route by name: its configuration may hold a secret). */
export function pendingRunOf(run: QueuedRun): PendingRun {
  return {
    profile: run.profile,
    routeName: run.routeName,
    event: run.event,
    deliveryId: run.deliveryId,
    prompt: run.prompt,
    extra: run.extra,
    receivedAt: run.receivedAt,
  };
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

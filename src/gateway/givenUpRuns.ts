import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import type { RunToRecord } from "../io/sessions/runJournal.js";
import type { PendingRun } from "../io/stores/pendingRuns.js";

/**
 * Records a run the shared queue gave up on (`state.backend: redis`: its instance lost while running it past
 * the takeover limit) as a run that failed here is recorded: counted `failed` in `svc_run_duration_seconds`,
 * with no time (it ran on the instances that were lost: its time there is not known here), its end in the
 * delivery history (`onEnd`, the error its NOTE gives), and an agent run's line with why in its profile's
 * run journal; a fired cron job's run has none there, as where it runs, and is recorded in its job's
 * `last_run` instead (`firedJob`: the cron scheduler's, as a failed run of the job is).
 */
export function givenUpRuns(deps: {
  readonly metrics: GatewayMetrics | undefined;
  readonly onEnd: ((run: PendingRun, err: unknown) => void) | undefined;
  journal(profile: string, run: RunToRecord): void;
  firedJob(run: PendingRun & { readonly cronJob: string }, err: Error): void;
}): (run: PendingRun, err: Error) => void {
  return (run, err) => {
    deps.metrics?.runFinished("failed", 0);
    deps.onEnd?.(run, err);
    if (run.cronJob !== undefined) deps.firedJob({ ...run, cronJob: run.cronJob }, err);
    else
      deps.journal(run.profile, {
        route: run.routeName,
        deliveryId: run.deliveryId,
        prompt: run.prompt,
        reply: "",
        error: err.message,
      });
  };
}

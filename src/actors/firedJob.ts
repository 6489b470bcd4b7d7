import type { QueuedRun } from "./runs.js";

/**
 * Whether a run is the fire of a cron job rather than an agent run. A fire names its job (`cronJob`), so
 * it stays one whatever its route became while it waited (across a restart too). A run that names none is
 * an agent run, unless an older version, which did not name the job, saved it as a fire: on a route that
 * is a `cron_job` route now, a run whose prompt has a fire's event line for its route fires that route's
 * job, as it did before.
 */
export function isFire(run: QueuedRun): boolean {
  if (run.cronJob !== undefined) return true;
  return (
    run.route.cron_job !== undefined &&
    run.prompt.includes(`\n\n[Webhook event: route ${run.routeName}, event `)
  );
}

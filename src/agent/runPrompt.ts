/** The cron job a run's route names (`cron:<job>`, as a cron job's runs are logged); undefined for a route's run. */
export function cronJobOf(route: string | undefined): string | undefined {
  return route?.startsWith("cron:") === true ? route.slice("cron:".length) : undefined;
}

/**
 * The prompt a refusal of it says to change: a cron job's own (which has no route and no event), or the
 * route's, which quotes the event's payload.
 */
export function promptToChange(route: string | undefined): string {
  const job = cronJobOf(route);
  return job === undefined ? "the route's prompt" : `the prompt of cron job ${job}`;
}

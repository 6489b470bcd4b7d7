/** The cron job a run's route names (`cron:<job>`, as a cron job's runs are logged); undefined for a route's run. */
export function cronJobOf(route: string | undefined): string | undefined {
  return route?.startsWith("cron:") === true ? route.slice("cron:".length) : undefined;
}

/**
 * The MCP server whose sampling request a run answers (`mcp:<server>`, as such runs are logged); undefined
 * for a route's or a cron job's run. A route name holds no ":".
 */
export function samplingServerOf(route: string | undefined): string | undefined {
  return route?.startsWith("mcp:") === true ? route.slice("mcp:".length) : undefined;
}

/**
 * The prompt a refusal of it says to change: a cron job's own (which has no route and no event), an MCP
 * server's sampling request (its messages are the prompt), or the route's, which quotes the event's payload.
 */
export function promptToChange(route: string | undefined): string {
  const job = cronJobOf(route);
  if (job !== undefined) return `the prompt of cron job ${job}`;
  const server = samplingServerOf(route);
  return server === undefined ? "the route's prompt" : `mcp_servers.${server}'s sampling request`;
}

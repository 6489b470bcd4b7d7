import { inProfile } from "../config/paths.js";
import { SCRIPT_GROUP } from "../io/scripts.js";
import { JOB_NAME } from "../io/stores/cronStore.js";

/**
 * The start's WARN line for the agent process groups a killed gateway left running, stopped now (their
 * runs are journaled: not the cron runs and route scripts, said apart). Where each run goes on depends on
 * the backend the killed gateway ran with: `local` runs it again from the journal, `redis` from the shared
 * queue. `inJournal`: how many of their runs are in the local journal (each agent's note says its run's
 * backend; a note of an older svc, which does not, counts when the state directory's lock names the gateway
 * that wrote it); the others are in the shared queue, left by a gateway on `redis`.
 */
export function orphanRunsLine(
  stopped: number,
  backend: "local" | "redis",
  inJournal: number,
  stateDir: string,
): string {
  const head = `[state] stopped ${stopped} agent process group(s) left running by a gateway that was killed`;
  const shared = stopped - inJournal;
  const queue =
    "run again from the shared queue in Redis, on some instance (this one included), once their lock expires (within about a minute, at most a minute and a half)";
  if (backend === "local") {
    if (shared === 0) return `${head}; their runs run again`;
    const notHere = `not run by this start: they are in the shared queue in Redis, which state.backend: local does not read — a gateway on state.backend: redis runs them once their lock expires (start one on redis to let them run)`;
    if (inJournal === 0) return `${head} with state.backend: redis; their runs are ${notHere}`;
    return `${head}; ${inJournal} of their runs run again from the journal; the other ${shared}, accepted with state.backend: redis, are ${notHere}`;
  }
  if (inJournal === 0) return `${head}; their runs ${queue}`;
  const journal = `not run by this start: state.backend: redis does not read the local journal in ${stateDir} that holds them — they run when the gateway runs with state.backend: local again (start it once on local to let them run, then switch back)`;
  if (shared === 0) return `${head} with state.backend: local; their runs are ${journal}`;
  return `${head}; ${inJournal} of their runs, accepted with state.backend: local, are ${journal}; the other ${shared} ${queue}`;
}

/**
 * The start's WARN line for a tool's process group a killed gateway (or `svc cron run`) left running,
 * stopped now: a stdio MCP server (`mcp:<server>`) or a `terminal` command (`tool:terminal`). Its run, if
 * it runs again, calls its tools anew.
 */
export function orphanToolLine(tool: string, profile: string | undefined): string {
  const where = inProfile(profile);
  if (tool.startsWith("mcp:"))
    return `[mcp] ${tool.slice("mcp:".length)}${where}: stopped the server process (SIGKILL to its group) left running by a gateway that was killed; the server is started again when it is connected`;
  return `[tools] ${tool.slice("tool:".length)}${where}: stopped a command (SIGKILL to its group) left running by a process that was killed; a run that runs again calls its tools anew`;
}

/** The label of a cron job's run in its agent's note. */
const CRON_GROUP = "cron:";

/**
 * The start's WARN line for a stopped process group whose run is not run again: a route script's
 * (`script:<route>`), whose event was never answered, or a cron job's run (`cron:<job>`, whatever the job's
 * name: one edited by hand or kept from an older svc may fail today's name rule; a bare job name in an older
 * note). A job's name has no `:`: a bare label of another kind is one a newer svc wrote, named as such.
 */
export function notRunAgainLine(label: string, profile: string | undefined): string {
  if (label.startsWith(SCRIPT_GROUP))
    return `[webhook] ${label.slice(SCRIPT_GROUP.length)}: stopped the route script left running by a gateway that was killed; its event was never answered — the sender's retry is processed`;
  const cron = label.startsWith(CRON_GROUP);
  const job = cron ? label.slice(CRON_GROUP.length) : label;
  if (cron || JOB_NAME.test(job))
    return `[cron] ${job}${inProfile(profile)}: stopped the agent of its run left running by a process that was killed; that run is not run again — the job runs at its next scheduled time — unless the gateway ran it on its schedule: then its occurrence is caught up once, as the line about that run says`;
  return `[state] stopped a process group noted by another svc version (${label}${inProfile(profile)}) left running by a process that was killed: this version cannot tell what it ran or whether it runs again`;
}

import type { QueuedRun } from "../actors/runs.js";
import { continuationColumns, type Logger } from "../io/log.js";
import type { PendingRun } from "../io/stores/pendingRuns.js";
import { shownTarget } from "../io/targets/names.js";
import type { AcceptedEvent } from "../streams/context.js";
import { howToAddRoute } from "./howToAddRoute.js";
import { runsByRoute } from "./runCounts.js";

/** Log lines of the request path: cheap (no per-request INFO line), never a secret or a payload. */
export function pipelineLogHooks(logger: Logger) {
  const warnedV1 = new Set<string>();
  let coalesceWarned = false;
  return {
    auth: {
      onLegacyV1(route: string) {
        if (warnedV1.has(route)) return;
        warnedV1.add(route);
        logger.warn(
          `[webhook] ${route}: sender uses the deprecated generic V1 signature (X-Webhook-Signature, no replay protection) — switch it to X-Webhook-Signature-V2 with X-Webhook-Timestamp`,
        );
      },
      onRejected(route: string, reason: string) {
        logger.debug(`[webhook] ${route}: rejected (401): ${reason}`);
      },
    },
    onPing(route: string, event: string) {
      logger.debug(`[webhook] ${route}: ${event} event ignored`);
    },
    onDuplicateWaits(route: string, deliveryId: string) {
      logger.debug(
        { route, delivery_id: deliveryId },
        `[webhook] ${route}: a repeat of a delivery under way waits for it — answered once it ends (200 duplicate when delivered, 502 when it failed, 503 when the gateway stops)`,
      );
    },
    onScriptIgnored(route: string, why: string) {
      logger.info(`[webhook] ${route}: script ignored the event (${why})`);
    },
    onDeliveryFailed(event: AcceptedEvent, err: unknown) {
      logger.error(
        {
          route: event.routeName,
          delivery_id: event.deliveryId,
          target: shownTarget(event.route.deliver),
          err: (err as Error)?.message ?? String(err),
        },
        `[webhook] ${event.routeName}: direct delivery to ${shownTarget(event.route.deliver)} failed`,
      );
    },
    onCronUnavailable(event: AcceptedEvent) {
      logger.warn(
        `[webhook] ${event.routeName}: cron_job ${event.route.cron_job} not fired — cron is not available in this gateway`,
      );
    },
    onCoalesceUnavailable(event: AcceptedEvent) {
      if (coalesceWarned) return;
      coalesceWarned = true;
      logger.warn(
        `[webhook] ${event.routeName}: coalescing is not available in this gateway; events run one by one`,
      );
    },
    onStageFailure(stage: string, err: unknown, _ctx: unknown) {
      logger.error(
        { stage, err: err instanceof Error ? (err.stack ?? err.message) : String(err) },
        `[webhook] internal error in the ${stage} stage`,
      );
    },
    // One line per stop or start, whatever the backlog: 100,000 saved runs must not mean 100,000 lines.
    onRunsSaved(events: readonly QueuedRun[], file: string) {
      logger.warn(
        { runs: events.length },
        `[webhook] ${events.length} agent run(s) not finished at shutdown — saved to ${file}, they run at the next start (${runsByRoute(events)})`,
      );
    },
    /**
     * The pending-runs file could not be written (a full disk). With the local journal (`journal`, its
     * directory) every such run is still recorded there unfinished, so the next start runs it: not lost.
     */
    onRunsLost(events: readonly QueuedRun[], file: string, err: unknown, journal?: string) {
      if (journal !== undefined) {
        logger.warn(
          { runs: events.length, err: String(err) },
          `[webhook] ${events.length} agent run(s) not finished at shutdown could not be saved to ${file} (${runsByRoute(events)}); the journal (${journal}) keeps them, so they run at the next start`,
        );
        return;
      }
      logger.error(
        { runs: events.length, err: String(err) },
        `[webhook] ${events.length} agent run(s) not finished at shutdown could not be saved to ${file} (${runsByRoute(events)}) — they are lost; their senders must send them again`,
      );
    },
    onRunsResumed(count: number, file: string) {
      logger.info(
        `[webhook] ${count} agent run(s) left unfinished at the last shutdown queued again (from ${file})`,
      );
    },
    /**
     * Saved runs whose route is gone, kept in `where` (the pending-runs file, or the journal). `boundNow`
     * gives the profile a route of that name is bound to now: one rebound to another profile is not gone,
     * and is named so, since a run resumes only under the profile it was accepted for.
     */
    /**
     * Saved runs, and pending coalescing groups (each by its latest event), whose route is gone.
     * `disabledNow` lists the disabled subscriptions: a route among them is not gone, and is named so.
     */
    onRunsKept(
      kept: readonly PendingRun[],
      where: string,
      boundNow?: (routeName: string) => string | undefined,
      groups: readonly PendingRun[] = [],
      disabledNow: () => ReadonlySet<string> = () => new Set(),
    ) {
      const named = (events: readonly PendingRun[]) =>
        events.map((run) => ({
          routeName: run.profile === "default" ? run.routeName : `${run.profile}/${run.routeName}`,
        }));
      const rebound = new Map<string, string>();
      for (const run of [...kept, ...groups]) {
        const profile = boundNow?.(run.routeName);
        if (profile !== undefined && profile !== run.profile) rebound.set(run.routeName, profile);
      }
      const shown = [...rebound]
        .slice(0, 10)
        .map(([route, profile]) => `${route} is bound to profile ${profile} now`);
      const more = rebound.size > shown.length ? `, +${rebound.size - shown.length} more` : "";
      const disabledSet = disabledNow();
      const disabled = [...new Set([...kept, ...groups].map((run) => run.routeName))].filter(
        (name) => disabledSet.has(name) && !rebound.has(name),
      );
      const allDisabled =
        disabled.length > 0 && [...kept, ...groups].every((run) => disabled.includes(run.routeName));
      const enable = disabled.slice(0, 10).map((name) => `svc webhook enable ${name}`);
      const enableNote =
        disabled.length === 0
          ? ""
          : allDisabled
            ? `; ${enable.join(", ")}, then restart the gateway`
            : `; ${disabled.slice(0, 10).join(", ")}${disabled.length > 10 ? `, +${disabled.length - 10} more` : ""} ${disabled.length === 1 ? "is a disabled subscription" : "are disabled subscriptions"}: ${enable.join(", ")}, then restart the gateway`;
      const note =
        (shown.length === 0
          ? ""
          : `; ${shown.join(", ")}${more}, and a saved run resumes only under the profile it was accepted for`) +
        enableNote;
      const runs = `${kept.length} saved agent run(s)`;
      const pending = `${groups.length} pending coalescing group(s)`;
      const [what, counts] =
        groups.length === 0
          ? [runs, runsByRoute(named(kept))]
          : kept.length === 0
            ? [pending, runsByRoute(named(groups))]
            : [
                `${runs} and ${pending}`,
                `runs — ${runsByRoute(named(kept))}; groups — ${runsByRoute(named(groups))}`,
              ];
      logger.warn(
        { runs: kept.length, groups: groups.length },
        `[webhook] ${what} not resumed — their route ${allDisabled ? "is a disabled subscription" : "no longer exists"} (${counts}${note}); they stay in ${where} and run at the next start that finds their route (a reload that brings it back does not run them${groups.length === 0 ? "" : "; a group takes in its route's first event after that"})`,
      );
    },
    onPendingUnreadable(file: string, movedTo: string, err: unknown) {
      logger.error(
        { err: String(err) },
        `[webhook] ${file} cannot be read; moved to ${movedTo} so no saved run is lost — inspect it and fix or delete it`,
      );
    },
    onPendingEntriesKept(file: string, count: number, firstProblem: string) {
      const one = count === 1;
      logger.warn(
        { entries: count },
        `[webhook] ${file}: ${count} ${one ? "entry is" : "entries are"} not an agent run this version of svc can read (${firstProblem}${one ? "" : ", …"}; written by a newer version, or edited by hand) — kept in the file as ${one ? "it was" : "they were"}, not run: inspect ${one ? "it" : "them"}, then fix or remove ${one ? "it" : "them"} from the file`,
      );
    },
    printHowToAddRoute(configFile: string, envFile: string) {
      logger.info(howToAddRoute(configFile, envFile, continuationColumns(logger)));
    },
  };
}

export type PipelineLogHooks = ReturnType<typeof pipelineLogHooks>;

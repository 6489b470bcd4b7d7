import { DEFAULT_PROFILE, svcPaths } from "../../config/paths.js";
import { shownName } from "../../io/mcp/shownName.js";
import {
  type ReloadSummary,
  readStatusFile,
  type ServerStatus,
  type StatusFile,
} from "../../io/mcp/statusFile.js";
import { existingProfiles } from "../../io/profiles.js";
import {
  asFirstOutcomes,
  awaitedConnect,
  endedByLater,
  type ReadReload,
  reloadSummaryText,
} from "./reloadSummary.js";

/**
 * The named profiles whose own MCP connections gateway `pid` holds (opened at a first run of the profile,
 * `<profile root>/mcp-cache/status.json` written by that gateway with servers in it): a reload applies to
 * them too, each rendering its entries with its own `.env`. A profile whose connections were closed (no
 * route, subscription or cron job bound to it any more) has none left, and is not reloaded; nor is one whose
 * connections are being closed (`closing`: a server slow to stop is still listed, stopped), which no reload's
 * report comes for.
 */
export function liveProfileHubs(home: string, pid: number): string[] {
  let profiles: string[];
  try {
    profiles = existingProfiles(home);
  } catch {
    return [];
  }
  return profiles.filter((profile) => {
    if (profile === DEFAULT_PROFILE) return false;
    const file = readStatusFile(svcPaths(home, profile).mcpCache);
    return file?.pid === pid && file.servers.length > 0 && file.closing === undefined;
  });
}

type ReloadReport = {
  readonly reload: ReadReload<NonNullable<StatusFile["lastReload"]>>;
  readonly servers: readonly ServerStatus[];
};

/**
 * What `cacheDir`'s status file says of reloads made at `sentAt` or later: the last one's report, with the
 * servers, and the last one the gateway refused (a named profile's `.env` emptied), with when. One read of the
 * file.
 */
function reloadSince(cacheDir: string, sentAt: number): { report?: ReloadReport; refused?: RefusalSince } {
  const status = readStatusFile(cacheDir);
  const refused = refusedSince(status, sentAt);
  const reload = status?.lastReload;
  const report =
    reload === undefined || Date.parse(reload.at) < sentAt
      ? undefined
      : { reload, servers: status?.servers ?? [] };
  return { ...(report === undefined ? {} : { report }), ...(refused === undefined ? {} : { refused }) };
}

/** What a refusal the gateway stamped since a command's signal is to that command (`refusalSince`). */
export type RefusalReading =
  /** The command's own reload was refused: no report came by the end of its wait. */
  | { readonly refused: string }
  /** A later reload's: the command's reload began before it and has reported. */
  | { readonly refusedLater: string }
  /** Neither yet: no report has come, and the command's wait has time left. */
  | { readonly pending: string }
  /**
   * A later reload's, refused while a reload begun since the signal (the command's) was still running, which
   * has not reported by the end of the command's wait: the command's reload is not reported in time, not refused.
   */
  | { readonly refusedLaterUnreported: string };

/** A refusal stamped since the command's signal (`refusedSince`). */
export interface RefusalSince {
  readonly at: number;
  readonly why: string;
  /** A reload begun since the signal was still running as the gateway refused: its report comes after. */
  readonly reportDue: boolean;
}

/**
 * Whose a refusal since the command's signal is, given when the first report since then began (`reportAt`,
 * its `at`): a report that began before the refusal is the command's reload's, applied, and the refusal a
 * later SIGHUP's (one that lands while the command's reload is still stopping servers, before it reports);
 * one that began after it answered a later signal, and the refusal gives way to it (none). With no report,
 * the refusal is the command's, unless a reload begun since the signal was still running when it came: that
 * reload is the command's, still running, and the refusal a later SIGHUP's; its report may come until the
 * command's wait is over (`pending`), and once it is over (`final`) the reload is not reported in time.
 */
export function refusalSince(
  refused: RefusalSince | undefined,
  reportAt: number | undefined,
  final: boolean,
): RefusalReading | undefined {
  if (refused === undefined) return undefined;
  if (reportAt === undefined) {
    if (!refused.reportDue) return { refused: refused.why };
    return final ? { refusedLaterUnreported: refused.why } : { pending: refused.why };
  }
  return refused.at > reportAt ? { refusedLater: refused.why } : undefined;
}

/** The refusal `status` carries stamped at `sentAt` or later, with when. */
export function refusedSince(status: StatusFile | undefined, sentAt: number): RefusalSince | undefined {
  const refusal = status?.lastRefusedReload;
  const refusedAt = refusal === undefined ? Number.NaN : Date.parse(refusal.at);
  if (refusal === undefined || !(refusedAt >= sentAt)) return undefined;
  const underway = refusal.underway === undefined ? Number.NaN : Date.parse(refusal.underway);
  return { at: refusedAt, why: refusal.why, reportDue: underway >= sentAt };
}

/**
 * Whether a server the reload (re)started or tried again is still connecting: its outcome is waited for,
 * so a connect that failed is not printed as a reconnect (one still closing its lost session connects
 * once that is done). The report's outcomes say when each connect first ended, so a server that crashes
 * right after its handshake, or one failed and retried in its backoff, is not waited for again.
 */
export function stillConnecting(reload: ReloadSummary, statuses: readonly ServerStatus[]): boolean {
  const servers = asFirstOutcomes(reload, statuses);
  const started = new Set([...reload.added, ...reload.changed, ...(reload.enabled ?? [])]);
  const retried = new Set(reload.retried ?? []);
  // (`stopped`, of a connect the report waits for: a later reload replacing its entry ended the connect; that
  // reload connects it again. A server it started no connect for, lazy or enabled: false, is stopped only by
  // the gateway's stop.)
  return servers.some(
    (s) =>
      ((started.has(s.name) || retried.has(s.name)) &&
        (s.state === "connecting" || (s.state === "stopped" && awaitedConnect(reload, s.name)))) ||
      (retried.has(s.name) && s.state === "reconnecting"),
  );
}

/**
 * `report` (the reload a command asked for) once a later reload has taken its place in the status file: a
 * connect it still waits for takes its outcome from the later report, which waits for the same server's
 * connect (`replacedLater`: that reload changed its entry, and connects it again); one the later reload did not
 * wait for is judged by its state, as in a report without outcomes, unless that reload's configuration no longer
 * has the server (removed before it connected: `removedLater`).
 */
export function outcomesSince<R extends ReloadSummary>(
  report: ReadReload<R>,
  later: ReloadSummary,
): ReadReload<R> {
  if (report.outcomes === undefined) return report;
  const outcomes = { ...report.outcomes };
  const newer = later.outcomes ?? {};
  const configured = new Set([
    ...later.added,
    ...later.changed,
    ...later.disabled,
    ...(later.enabled ?? []),
    ...later.unchanged,
  ]);
  const removedLater = [...(report.removedLater ?? [])];
  const replacedLater = new Set(report.replacedLater ?? []);
  for (const [name, outcome] of Object.entries(outcomes)) {
    if (outcome.state !== "connecting") continue;
    const next = Object.hasOwn(newer, name) ? newer[name] : undefined;
    if (next !== undefined) {
      outcomes[name] = next;
      replacedLater.add(name);
    } else {
      delete outcomes[name];
      if (!configured.has(name)) removedLater.push(name);
    }
  }
  return {
    ...report,
    outcomes,
    ...(removedLater.length === 0 ? {} : { removedLater }),
    ...(replacedLater.size === 0 ? {} : { replacedLater: [...replacedLater] }),
  };
}

/**
 * Of the servers the reload (re)started or tried again, those the gateway's stop ended before they connected:
 * named so by the gateway's report (written once the stop ended their connect), or, once the stop has begun
 * (`stopping`), still connecting. They are listed as not connected, not as reconnected (exit 1).
 */
export function endedByStop(
  reload: ReadReload,
  statuses: readonly ServerStatus[],
  stopping: boolean,
): string[] {
  const servers = asFirstOutcomes(reload, statuses);
  const reported = new Set(reload.endedByStop ?? []);
  const retried = new Set(reload.retried ?? []);
  // At the gateway's stop every server is stopped: of those, only a connect the report waits for was under way
  // (a lazy or enabled: false server the reload started no connect for was not).
  const connecting = (name: string) => {
    const state = servers.find((s) => s.name === name)?.state;
    return (
      state === "connecting" ||
      (state === "stopped" && awaitedConnect(reload, name)) ||
      (retried.has(name) && state === "reconnecting")
    );
  };
  const own = [...reload.added, ...reload.changed, ...(reload.enabled ?? []), ...retried];
  const removedLater = new Set(reload.removedLater ?? []);
  return own.filter(
    (name) => !removedLater.has(name) && (reported.has(name) || (stopping && connecting(name))),
  );
}

/**
 * What `svc mcp reload` prints for a named profile's own connections, under the default profile's summary:
 * the same lines under `Profile <name> (its own .env and logins):`, or, for a profile the reload (or a later
 * one) left with no route, subscription or cron job bound to it (its servers all closed while config.yaml still
 * has some: a report marked `closed`, or, from a gateway started before it was marked, one that removed every
 * server), that its connections are closed.
 */
export function profileReloadText(profile: string, report: ReloadReport, configured: number): string {
  const { reload, servers } = report;
  if (reload.closed === true || (servers.length === 0 && configured > 0 && reload.removed.length > 0))
    return `Profile ${profile}: its connections are closed — no route, subscription or cron job is bound to it any more (a later run of it opens them again)\n`;
  return reloadSummaryText(0, reload, servers, `Profile ${profile} (its own .env and logins):`);
}

/** What the command has read of a named profile's reload at one look (`profileReports`). */
export interface ProfileLook {
  readonly report?: ReloadReport;
  /** Why the gateway refused the reload the command asked for. */
  readonly refused?: string;
  /**
   * Why it refused a later reload, the one the command asked for applied (reported, then or since), or still
   * running as the refusal came and not reported by the end of the command's wait.
   */
  readonly refusedLater?: string;
}

/**
 * Each named profile's report of the reload a command asked for, as the command reads the profiles' status
 * files while it waits (`look`, at each of its reads): the first report since `sentAt` is kept, a later
 * reload's (another SIGHUP) giving it the outcomes of the connects both wait for and naming those it removed
 * before they connected (`outcomesSince`), as the default profile's is; a later reload that closed the
 * profile's connections (no route bound to it any more) is kept in its place, since nothing of the profile's
 * reload runs then. Or why the gateway refused it: a refusal since `sentAt` read while there is no report
 * since then (one followed by a newer report gives way to it, as the default profile's does) — when a reload
 * begun since then was running as it came, only at the `final` look (the wait over), that reload's report
 * deciding until then; one stamped after the first report is a later reload's (`refusedLater`), not the
 * command's (`refusalSince`).
 */
export function profileReports(home: string, sentAt: number) {
  const reports = new Map<string, ReloadReport>();
  const refusals = new Map<string, string>();
  const laterRefusals = new Map<string, string>();
  return {
    look(profile: string, final = false): ProfileLook {
      const refusedBefore = refusals.get(profile);
      if (refusedBefore !== undefined) return { refused: refusedBefore };
      const seen = reloadSince(svcPaths(home, profile).mcpCache, sentAt);
      const kept = reports.get(profile);
      // The first report since the signal is the command's reload's (one of a later reload, when the command's
      // was refused, comes after that refusal). A refusal with none is the command's only once the wait is
      // over (`final`): a later SIGHUP's refusal lands before the report of a reload still stopping servers.
      const first = kept ?? seen.report;
      const reading = refusalSince(
        seen.refused,
        first === undefined ? undefined : Date.parse(first.reload.at),
        final,
      );
      if (reading !== undefined && "refused" in reading) {
        refusals.set(profile, reading.refused);
        return { refused: reading.refused };
      }
      if (reading !== undefined && "refusedLater" in reading)
        laterRefusals.set(profile, reading.refusedLater);
      if (reading !== undefined && "refusedLaterUnreported" in reading)
        laterRefusals.set(profile, reading.refusedLaterUnreported);
      const refusedLater = laterRefusals.get(profile);
      const later = refusedLater === undefined ? {} : { refusedLater };
      const now = seen.report;
      if (now === undefined) return kept === undefined ? later : { report: kept, ...later };
      // The same report, with its connects' outcomes once it has them, or a later one folded in (or, when that
      // one closed the profile's connections, in its place).
      const report =
        kept === undefined || now.reload.at === kept.reload.at || now.reload.closed === true
          ? now
          : { reload: outcomesSince(kept.reload, now.reload), servers: now.servers };
      reports.set(profile, report);
      return { report, ...later };
    },
  };
}

/**
 * After the default profile's summary, each named profile's with connections of its own (a reload renders
 * its entries with its own `.env`: a token rotated there reconnects only that profile's server), waited for
 * while `waiting()` and the gateway is not `stopping()`; one that has not reported by then is named so (exit 1:
 * its reload is not confirmed), and one whose reload was refused says why (exit 1). Each profile's summary is of
 * its first report since the command's signal (`reports`, read while the default profile's was waited for too).
 * Returns the servers the gateway's stop ended before they connected, those a later reload removed before they
 * connected, and those whose connect a later reload that had not reported yet ended (`endedByLater`), each as
 * `<server> (profile <name>)`.
 */
export async function printProfileReloads(
  profiles: readonly string[],
  reports: ReturnType<typeof profileReports>,
  /** How many servers config.yaml (as the gateway read it at the signal) has. */
  configured: number,
  waiting: () => boolean,
  stopping: () => boolean,
): Promise<{
  readonly endedByStop: string[];
  readonly removedLater: string[];
  readonly endedByLater: string[];
}> {
  const ended: string[] = [];
  const removed: string[] = [];
  const endedLater: string[] = [];
  for (const profile of profiles) {
    let seen = reports.look(profile);
    let report = seen.report;
    while (
      seen.refused === undefined &&
      (report === undefined || stillConnecting(report.reload, report.servers)) &&
      waiting() &&
      !stopping()
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = reports.look(profile);
      report = seen.report;
    }
    // No report by the end of the wait: a refusal since the signal is the command's, unless it came while a
    // reload begun since the signal (the command's) was still running.
    if (report === undefined && seen.refused === undefined) {
      seen = reports.look(profile, true);
      report = seen.report;
    }
    if (seen.refused !== undefined) {
      process.stderr.write(
        `svc: profile ${profile}'s connections keep their values: the gateway refused their reload — fix what is named below and run svc mcp reload again:\n${seen.refused}\n`,
      );
      process.exitCode = 1;
      continue;
    }
    if (report === undefined) {
      process.stdout.write(`Profile ${profile}: has not reported its reload yet — see the gateway log\n`);
      // Not confirmed, as the default profile's reload not reported in time: a script must not go on as if it were.
      process.exitCode = 1;
      // Refused while the reload the command asked for was still running: a later SIGHUP's.
      if (seen.refusedLater !== undefined)
        process.stdout.write(
          `  a later reload was refused for this profile while this one was still running: ${seen.refusedLater}\n`,
        );
      continue;
    }
    const closed = report.reload.closed === true;
    const stopped = closed ? [] : endedByStop(report.reload, report.servers, stopping());
    ended.push(...stopped.map((name) => `${shownName(name)} (profile ${profile})`));
    if (!closed) {
      removed.push(
        ...(report.reload.removedLater ?? []).map((name) => `${shownName(name)} (profile ${profile})`),
      );
      endedLater.push(
        ...endedByLater({ ...report.reload, endedByStop: stopped }, report.servers).map(
          (name) => `${shownName(name)} (profile ${profile})`,
        ),
      );
    }
    process.stdout.write(
      profileReloadText(
        profile,
        { ...report, reload: { ...report.reload, endedByStop: stopped } },
        configured,
      ),
    );
    // Not the command's: the reload above was applied, and the profile's connections keep what it made.
    if (seen.refusedLater !== undefined)
      process.stdout.write(
        `  a later reload was refused for this profile, whose connections keep what this one applied: ${seen.refusedLater}\n`,
      );
  }
  return { endedByStop: ended, removedLater: removed, endedByLater: endedLater };
}

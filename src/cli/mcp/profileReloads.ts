import { DEFAULT_PROFILE, svcPaths } from "../../config/paths.js";
import { type ReloadSummary, readStatusFile, type ServerStatus } from "../../io/mcp/statusFile.js";
import { existingProfiles } from "../../io/profiles.js";
import { reloadSummaryText } from "./reloadSummary.js";

/**
 * The named profiles whose own MCP connections gateway `pid` holds (opened at a first run of the profile,
 * `<profile root>/mcp-cache/status.json` written by that gateway with servers in it): a reload applies to
 * them too, each rendering its entries with its own `.env`. A profile whose connections were closed (no
 * route, subscription or cron job bound to it any more) has none left, and is not reloaded.
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
    return file?.pid === pid && file.servers.length > 0;
  });
}

/** The report of a reload made at `sentAt` or later in `cacheDir`'s status file, with its servers. */
export function reportSince(
  cacheDir: string,
  sentAt: number,
): { readonly reload: ReloadSummary; readonly servers: readonly ServerStatus[] } | undefined {
  const status = readStatusFile(cacheDir);
  const reload = status?.lastReload;
  if (reload === undefined || Date.parse(reload.at) < sentAt) return undefined;
  return { reload, servers: status?.servers ?? [] };
}

/** Why the gateway refused a named profile's part of a reload made at `sentAt` or later (its `.env` emptied). */
export function refusedSince(cacheDir: string, sentAt: number): string | undefined {
  const refused = readStatusFile(cacheDir)?.lastRefusedReload;
  return refused !== undefined && Date.parse(refused.at) >= sentAt ? refused.why : undefined;
}

/**
 * Whether a server the reload (re)started or tried again is still connecting: its outcome is waited for,
 * so a connect that failed is not printed as a reconnect (one still closing its lost session connects
 * once that is done).
 */
export function stillConnecting(reload: ReloadSummary, servers: readonly ServerStatus[]): boolean {
  const started = new Set([...reload.added, ...reload.changed, ...(reload.enabled ?? [])]);
  const retried = new Set(reload.retried ?? []);
  return servers.some(
    (s) =>
      ((started.has(s.name) || retried.has(s.name)) && s.state === "connecting") ||
      (retried.has(s.name) && s.state === "reconnecting"),
  );
}

/**
 * What `svc mcp reload` prints for a named profile's own connections, under the default profile's summary:
 * the same lines under `Profile <name> (its own .env and logins):`, or, for a profile the reload left with no
 * route, subscription or cron job bound to it (its servers all closed while config.yaml still has some),
 * that its connections are closed.
 */
export function profileReloadText(
  profile: string,
  report: { readonly reload: ReloadSummary; readonly servers: readonly ServerStatus[] },
  configured: number,
): string {
  const { reload, servers } = report;
  if (servers.length === 0 && configured > 0 && reload.removed.length > 0)
    return `Profile ${profile}: its connections are closed — no route, subscription or cron job is bound to it any more (a later run of it opens them again)\n`;
  return reloadSummaryText(0, reload, servers, `Profile ${profile} (its own .env and logins):`);
}

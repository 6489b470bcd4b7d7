import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../../errors.js";
import type { ConnectionState } from "../../machines/mcpConnection.js";
import { writeJsonAtomic } from "../stores/atomicFile.js";
import { directoryInPlaceFix, isDirectoryError } from "../stores/unreadableStoreFix.js";

/** What a reload of `mcp_servers` did to each server, by name. */
export interface ReloadSummary {
  readonly added: string[];
  readonly removed: string[];
  readonly changed: string[];
  /** Changed to `enabled: false`: stopped, not reconnected. */
  readonly disabled: string[];
  /**
   * Changed from `enabled: false` to enabled: started, never connected before (not "reconnected"). Absent
   * in the report of a gateway started before it was reported.
   */
  readonly enabled?: string[];
  readonly unchanged: string[];
  /**
   * Of `unchanged`, the servers that were not connected (failed, or reconnecting after a lost connection)
   * and were tried again at once. Absent in the report of a gateway started before it was reported.
   */
  readonly retried?: string[];
  /**
   * Of `changed`, the servers that had never connected (lazy, not called yet): started by the reload, not
   * reconnected. Absent in the report of a gateway started before it was reported.
   */
  readonly started?: string[];
  /**
   * Of the servers it added, enabled, changed or retried, those whose connect the gateway's stop ended
   * before they connected: written by the stop, absent until then.
   */
  readonly endedByStop?: string[];
  /**
   * Of the servers it added, enabled, changed or retried whose connect it waited for, how that connect first
   * ended: `connecting` until it connects or fails (a server crashing right after its handshake is connected
   * here, whatever it is by the time the report is read); of those it started no connect for, `lazy` or
   * `skipped` (enabled: false), as they were then (the gateway's stop makes every server stopped). Absent in
   * the report of a gateway started before it was reported (and `lazy`, `skipped` before they were).
   */
  readonly outcomes?: Readonly<Record<string, ReloadConnectOutcome>>;
}

/**
 * A connect a reload started or tried again: still under way, or how it first ended; or none started (the
 * server lazy, or enabled: false).
 */
export type ReloadConnectOutcome =
  | { readonly state: "connecting" | "connected" | "lazy" | "skipped" }
  | { readonly state: "failed"; readonly lastError?: string };

/** One server as `svc mcp list` and the inspector show it. */
export interface ServerStatus {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly state: ConnectionState;
  readonly toolCount: number;
  readonly lazy: boolean;
  /** A schema cache exists for the entry as configured now. */
  readonly cached: boolean;
  readonly era?: string;
  readonly lastError?: string;
  readonly collisions: readonly string[];
  /** Problems of the last tool listing: a filter entry matching nothing, a name over 64 characters. */
  readonly warnings?: readonly string[];
}

/** What the running gateway publishes for the CLI (`<profile root>/mcp-cache/status.json`). */
export interface StatusFile {
  readonly pid: number;
  readonly updatedAt: string;
  readonly servers: ServerStatus[];
  readonly lastReload?: ReloadSummary & {
    readonly at: string;
    /**
     * A reload that closed a named profile's connections (no route, subscription or cron job is bound to it any
     * more), which removes every server from the profile's hub while config.yaml still has them; absent for any
     * other reload, and in the report of a gateway started before it was reported.
     */
    readonly closed?: true;
  };
  /**
   * The last SIGHUP whose config.yaml the gateway refused (it kept the running config), and why; `underway`:
   * when the newest reload still running as it was refused began (absent when none was), whose report comes
   * after this refusal.
   */
  readonly lastRefusedReload?: { readonly at: string; readonly why: string; readonly underway?: string };
  /**
   * When a close of a named profile's connections began (no route, subscription or cron job is bound to it any
   * more), while it runs (a server slow to stop): the gateway reloads that profile no more, so `svc mcp reload`
   * waits for no report of it. Absent once the close has reported (`lastReload.closed`), once the profile is
   * bound again, and in the file of a gateway started before it was written.
   */
  readonly closing?: string;
}

export function statusPath(cacheDir: string): string {
  return join(cacheDir, "status.json");
}

/** A directory where the status file goes, named with what to do: the gateway cannot write the file there. */
function directoryInPlace(path: string): string {
  return `${path}: ${directoryInPlaceFix("the running gateway's MCP status")}`;
}

export function writeStatusFile(cacheDir: string, file: StatusFile): void {
  const path = statusPath(cacheDir);
  try {
    writeJsonAtomic(path, file);
  } catch (err) {
    if (isDirectoryError(err)) throw new SvcError("store_unwritable", directoryInPlace(path), { cause: err });
    throw err;
  }
}

/**
 * What the CLI says of a directory in the status file's place, where the gateway can write no status (nor the
 * report of a reload); undefined when there is none.
 */
export function statusFileIsDirectory(cacheDir: string): string | undefined {
  const path = statusPath(cacheDir);
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true
      ? directoryInPlace(path)
      : undefined;
  } catch {
    return undefined; // a file where mcp-cache goes: said as such by the caller
  }
}

/**
 * Whether parsed JSON has the shape the gateway writes, as far as the CLI reads it without checking: a file
 * edited by hand (`null`, `servers: null`) otherwise failed `svc mcp list` with a TypeError.
 */
function wellFormed(file: unknown): file is StatusFile {
  if (typeof file !== "object" || file === null) return false;
  const { pid, servers } = file as Record<string, unknown>;
  return (
    Number.isInteger(pid) &&
    Array.isArray(servers) &&
    servers.every(
      (s) =>
        typeof s === "object" &&
        s !== null &&
        typeof (s as Record<string, unknown>).name === "string" &&
        Array.isArray((s as Record<string, unknown>).collisions),
    )
  );
}

/** The running gateway's status, or undefined when missing, unreadable or not of the shape it writes. */
export function readStatusFile(cacheDir: string): StatusFile | undefined {
  const path = statusPath(cacheDir);
  if (!existsSync(path)) return undefined;
  try {
    const file: unknown = JSON.parse(readFileSync(path, "utf8"));
    return wellFormed(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

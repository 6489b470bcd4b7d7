import { withoutProcessOutput } from "../io/mcp/processOutput.js";

/**
 * The "goes on without its tools" WARNs already logged for MCP servers that runs were offered without naming
 * them (toolsets that name no MCP server are offered every enabled one): a server's is logged once per
 * episode — until a run finds the server up again, or down another way (another error, or failed after it
 * was still connecting) — not at every run of a busy route. One runner keeps one (a reload, which tries failed servers again, starts
 * over); it holds at most one entry per configured server of each profile: a server found up, or no longer
 * configured, is forgotten.
 */
export class UnaskedServerWarnings {
  /** By profile, then server: how the server was down when its WARN was logged (`state` and error). */
  private readonly warned = new Map<string, Map<string, string>>();

  /**
   * Forgets the profile's servers that are no longer down with none of their tools registered (connected,
   * lazy, disabled, removed): a later failure is a new episode, warned about again. The hub's status and
   * tools are read only when the profile has a WARN logged, not at every run.
   */
  observe(profile: string, hub: ServerStates): void {
    const warned = this.warned.get(profile);
    if (warned === undefined) return;
    const registered = new Set(hub.tools().map((tool) => tool.server));
    const down = new Set(
      hub
        .status()
        .filter((s) => DOWN_STATES.has(s.state) && !registered.has(s.name))
        .map((s) => s.name),
    );
    for (const server of warned.keys()) if (!down.has(server)) warned.delete(server);
    if (warned.size === 0) this.warned.delete(profile);
  }

  /**
   * Whether the WARN for `server` is not logged yet in its episode, in which case it is noted as logged.
   * `down`: how it is down (its state and error), warned about again when that changes — but not when only
   * what its process wrote differs (`withoutProcessOutput`), as it does at each background retry; undefined for
   * a server still connecting when the run's wait ended — the first connect, or a retry of one already warned about.
   */
  firstTime(profile: string, server: string, down: ServerDown | undefined): boolean {
    let warned = this.warned.get(profile);
    if (warned === undefined) {
      warned = new Map();
      this.warned.set(profile, warned);
    }
    const logged = warned.get(server);
    const episode =
      down === undefined ? undefined : `${down.state}: ${withoutProcessOutput(down.error ?? "")}`;
    if (logged !== undefined && (episode === undefined || logged === episode)) return false;
    warned.set(server, episode ?? STILL_CONNECTING);
    return true;
  }
}

/** What `observe` reads of a profile's MCP hub. */
interface ServerStates {
  status(): ReadonlyArray<{ readonly name: string; readonly state: string }>;
  tools(): ReadonlyArray<{ readonly server: string }>;
}

/** How a server is down: its state and last error. */
interface ServerDown {
  readonly state: string;
  readonly error?: string | undefined;
}

/** The states of a server that has no connection (a background retry of a failed one is `connecting`). */
const DOWN_STATES: ReadonlySet<string> = new Set(["connecting", "failed", "reconnecting"]);

/** What is noted for a server whose WARN said it was still connecting: any later way of being down differs. */
const STILL_CONNECTING = "connecting";

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
   * lazy, disabled, removed): a later failure is a new episode, warned about again.
   */
  observe(
    profile: string,
    status: ReadonlyArray<{ readonly name: string; readonly state: string }>,
    tools: ReadonlyArray<{ readonly server: string }>,
  ): void {
    const warned = this.warned.get(profile);
    if (warned === undefined) return;
    const registered = new Set(tools.map((tool) => tool.server));
    const down = new Set(
      status.filter((s) => DOWN_STATES.has(s.state) && !registered.has(s.name)).map((s) => s.name),
    );
    for (const server of warned.keys()) if (!down.has(server)) warned.delete(server);
    if (warned.size === 0) this.warned.delete(profile);
  }

  /**
   * Whether the WARN for `server` is not logged yet in its episode, in which case it is noted as logged.
   * `down`: how it is down (its state and error), warned about again when that changes; undefined for a server
   * still connecting when the run's wait ended — the first connect, or a retry of one already warned about.
   */
  firstTime(profile: string, server: string, down: string | undefined): boolean {
    let warned = this.warned.get(profile);
    if (warned === undefined) {
      warned = new Map();
      this.warned.set(profile, warned);
    }
    const logged = warned.get(server);
    if (logged !== undefined && (down === undefined || logged === down)) return false;
    warned.set(server, down ?? STILL_CONNECTING);
    return true;
  }
}

/** The states of a server that has no connection (a background retry of a failed one is `connecting`). */
const DOWN_STATES: ReadonlySet<string> = new Set(["connecting", "failed", "reconnecting"]);

/** What is noted for a server whose WARN said it was still connecting: any later way of being down differs. */
const STILL_CONNECTING = "connecting";

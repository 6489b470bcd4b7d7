/**
 * An MCP server a run selected and goes on without: still making its first connect when the wait ended
 * (`connecting`), or down with none of its tools registered — its connect failed (a command not found, a
 * crash before the handshake, waiting out its backoff: `failed`) or its connection was lost (`reconnecting`).
 */
export interface ServerWithoutTools {
  readonly server: string;
  readonly state: "connecting" | "failed" | "reconnecting";
  /** The server's last error, without the `mcp_servers.<name>: ` its status leads with. */
  readonly error?: string;
}

/**
 * The servers of `servers` that are failed or reconnecting with none of their tools registered, given the
 * hub's status and its registered tools.
 */
export function downWithoutTools(
  status: ReadonlyArray<{ readonly name: string; readonly state: string; readonly lastError?: string }>,
  tools: ReadonlyArray<{ readonly server: string }>,
  servers: readonly string[],
): ServerWithoutTools[] {
  const wanted = new Set(servers);
  const registered = new Set(tools.map((tool) => tool.server));
  return status.flatMap((s) =>
    wanted.has(s.name) && !registered.has(s.name) && (s.state === "failed" || s.state === "reconnecting")
      ? [
          {
            server: s.name,
            state: s.state,
            ...(s.lastError === undefined ? {} : { error: withoutServerName(s.name, s.lastError) }),
          },
        ]
      : [],
  );
}

const withoutServerName = (server: string, error: string): string => {
  for (const prefix of [`mcp_servers.${server}: `, `${server}: `])
    if (error.startsWith(prefix)) return error.slice(prefix.length);
  return error;
};

/**
 * The WARN a run logs for the servers it goes on without because they are down:
 * `[agent] <route>: mcp_servers.notes is failed (command not found: nodee …) — the run goes on without its tools`
 * (the errors given with svc's secrets hidden: they may quote what a connect sent). `unasked`: the run's
 * toolsets did not name them, and the line is logged once for them being down so (`UnaskedServerWarnings`).
 */
export function downServersLine(
  route: string,
  servers: readonly ServerWithoutTools[],
  unasked = false,
): string {
  const each = servers.map(
    (s) => `mcp_servers.${s.server} is ${s.state}${s.error === undefined ? "" : ` (${s.error})`}`,
  );
  return `[agent] ${route}: ${each.join(", ")} — ${goesOnWithout(servers.length, unasked)}`;
}

/**
 * The WARN a run logs for the servers still making their first connect when its wait for them ended, after
 * `waitedMs` (to the millisecond).
 */
export function stillConnectingLine(
  route: string,
  servers: readonly string[],
  waitedMs: number,
  unasked = false,
): string {
  return `[agent] ${route}: ${servers.map((name) => `mcp_servers.${name}`).join(", ")} still connecting after ${Math.round(waitedMs) / 1000} s — ${goesOnWithout(servers.length, unasked)}`;
}

const goesOnWithout = (count: number, unasked: boolean): string => {
  const one = count === 1;
  const its = one ? "its" : "their";
  if (!unasked) return `the run goes on without ${its} tools`;
  const [it, connects, stays] = one ? ["it", "connects", "stays"] : ["they", "connect", "stay"];
  return `the run goes on without ${its} tools, as later runs will until ${it} ${connects} (not said again while ${it} ${stays} so: the run's toolsets do not name ${one ? "it" : "them"})`;
};

/**
 * `svc gateway run` loads the whole program (commander, then the gateway: uWS, XState, the MCP SDK, every
 * platform) before it can install its signal handlers: a second or more on a busy machine. A SIGINT or
 * SIGTERM in that time is held here instead of killing the process, and the gateway then stops cleanly
 * without starting; a SIGHUP (a reload asked for right after a start) is let go: the configuration is
 * read as the gateway starts anyway.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
let held: string | undefined;
const hold = (signal: string) => {
  held ??= signal;
};
const ignore = () => {};

export function holdStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, hold);
  process.on("SIGHUP", ignore);
}

/** Stops holding (the caller has installed its own handlers); the first stop signal that arrived, if any. */
export function releaseStopSignals(): string | undefined {
  for (const signal of STOP_SIGNALS) process.off(signal, hold);
  process.off("SIGHUP", ignore);
  return held;
}

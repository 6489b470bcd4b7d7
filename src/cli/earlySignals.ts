/**
 * `svc gateway run` loads the whole program (commander, then the gateway: uWS, XState, the MCP SDK, every
 * platform) before it can install its signal handlers: a second or more on a busy machine. A SIGINT,
 * SIGTERM or SIGQUIT in that time is held here instead of killing the process, and the gateway then stops
 * cleanly without starting; a SIGHUP (a reload asked for right after a start) is let go, and said once the
 * gateway can log: the configuration is read as the gateway starts anyway; so are SIGUSR1 (Node's debugger)
 * and SIGUSR2. Before this module runs, Node itself is still starting (tens of ms): nothing in JavaScript
 * can catch a signal then.
 */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGQUIT"] as const;
/** Let go while the program loads: a reload comes too early to matter, and the others mean nothing to svc. */
const IGNORED_SIGNALS = ["SIGHUP", "SIGUSR1", "SIGUSR2"] as const;
let held: string | undefined;
const hold = (signal: string) => {
  held ??= signal;
};
let reloadAsked = false;
const ignore = (signal: string) => {
  if (signal === "SIGHUP") reloadAsked = true;
};

export function holdStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, hold);
  for (const signal of IGNORED_SIGNALS) process.on(signal, ignore);
}

/** Stops holding (the caller has installed its own handlers); the first stop signal that arrived, if any. */
export function releaseStopSignals(): string | undefined {
  for (const signal of STOP_SIGNALS) process.off(signal, hold);
  for (const signal of IGNORED_SIGNALS) process.off(signal, ignore);
  return held;
}

/** Whether a SIGHUP arrived while the program loaded (let go: the start reads the configuration). */
export const reloadAskedWhileLoading = (): boolean => reloadAsked;

/**
 * `svc gateway run` loads the whole gateway (uWS, XState, the MCP SDK, every platform) before it can
 * install its signal handlers: a second or more on a busy machine. A SIGINT/SIGTERM in that time is held
 * here instead of killing the process, and the gateway then stops cleanly without starting.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
let held: string | undefined;
const hold = (signal: string) => {
  held ??= signal;
};

export function holdStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, hold);
}

/** Stops holding; the first stop signal that arrived meanwhile, if any. */
export function releaseStopSignals(): string | undefined {
  for (const signal of STOP_SIGNALS) process.off(signal, hold);
  return held;
}

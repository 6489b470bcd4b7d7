/**
 * `svc gateway run` loads the whole program (commander, then the gateway: uWS, XState, the MCP SDK, every
 * platform) before it can install its signal handlers: a second or more on a busy machine. A SIGINT,
 * SIGTERM or SIGQUIT in that time is held here instead of killing the process, and the gateway then stops
 * cleanly without starting; a SIGHUP (a reload asked for right after a start) is let go: the configuration
 * is read as the gateway starts anyway; so are SIGUSR1 (Node's debugger) and SIGUSR2.
 */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGQUIT"] as const;
/** Let go while the program loads: a reload comes too early to matter, and the others mean nothing to svc. */
const IGNORED_SIGNALS = ["SIGHUP", "SIGUSR1", "SIGUSR2"] as const;
interface Hold {
  signal: string | undefined;
  readonly hold: (signal: string) => void;
  readonly ignore: () => void;
}

function newHold(): Hold {
  const state: Hold = {
    signal: undefined,
    hold: (signal) => {
      state.signal ??= signal;
    },
    ignore: () => {},
  };
  return state;
}

// The built entry script and the program it loads are two bundles, each with its own copy of this module:
// the hold lives on the global object, so the program's release ends the entry's hold.
const SLOT = Symbol.for("svc.earlySignals");
const slot = globalThis as { [SLOT]?: Hold };
slot[SLOT] ??= newHold();
const state = slot[SLOT];

export function holdStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, state.hold);
  for (const signal of IGNORED_SIGNALS) process.on(signal, state.ignore);
}

/** Stops holding (the caller has installed its own handlers); the first stop signal that arrived, if any. */
export function releaseStopSignals(): string | undefined {
  for (const signal of STOP_SIGNALS) process.off(signal, state.hold);
  for (const signal of IGNORED_SIGNALS) process.off(signal, state.ignore);
  return state.signal;
}

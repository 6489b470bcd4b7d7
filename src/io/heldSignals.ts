/**
 * Work the process must not be ended in the middle of: a token refresh between its request and the save
 * of its answer (the authorization server has rotated the refresh token by then; cut there, the tokens file
 * keeps the used one, and a server with reuse detection revokes the whole grant at its next use).
 *
 * While such work runs, a SIGINT, SIGTERM or SIGHUP that no handler of the program's takes (the default
 * action of `svc mcp tools`, `test`, `list`: end at once) is held and raised again once the work is done;
 * a second one ends the process at once. A program with handlers of its own (the gateway, `svc mcp call`)
 * waits for `unfinishedWork()` before it exits.
 */

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Listeners that act only when they are a signal's last listener (the stdio transport's, which stops its
 * servers' groups as the process dies): they are not a handler of the program's.
 */
export const standsBack = new WeakSet<(...args: never[]) => unknown>();

/** What a piece of such work is, for the line of a program that waits for it (`unfinishedWork`). */
export interface HeldWork {
  /** `mcp_servers.notes's token refresh` */
  readonly what: string;
  /** How long it can take at most (its request's timeout). */
  readonly atMostMs: number;
}

const running = new Map<Promise<unknown>, HeldWork>();
let held: NodeJS.Signals | undefined;
const holders = new Map<NodeJS.Signals, () => void>();

/** Whether a listener of the program's (not ours, not one that stands back) takes `signal`. */
function handledElsewhere(signal: NodeJS.Signals): boolean {
  const ours = holders.get(signal);
  return process
    .listeners(signal)
    .some((l) => l !== ours && !standsBack.has(l as (...args: never[]) => unknown));
}

/** Stops holding signals; a signal held meanwhile is raised again (the default action ends the process). */
export function letSignalsThrough(): void {
  for (const [signal, listener] of holders) process.off(signal, listener);
  holders.clear();
  const signal = held;
  held = undefined;
  if (signal !== undefined) process.kill(process.pid, signal);
}

function holdSignals(): void {
  for (const signal of SIGNALS) {
    const listener = () => {
      if (handledElsewhere(signal)) return;
      // A second one: the user insists.
      if (held !== undefined) letSignalsThrough();
      else held = signal;
    };
    holders.set(signal, listener);
    process.on(signal, listener);
  }
}

/** Runs `work` so that the process does not end by a signal before it has settled (see above). */
export async function finishBeforeExit<T>(work: () => Promise<T>, held: HeldWork): Promise<T> {
  if (running.size === 0 && process.platform !== "win32") holdSignals();
  const promise = work();
  running.set(promise, held);
  try {
    return await promise;
  } finally {
    running.delete(promise);
    if (running.size === 0) letSignalsThrough();
  }
}

/**
 * Settles once no work started with `finishBeforeExit` is running (at once when none is); `waiting` is told
 * of each piece it waits for, once.
 */
export async function unfinishedWork(waiting?: (held: HeldWork) => void): Promise<void> {
  const told = new Set<Promise<unknown>>();
  while (running.size > 0) {
    for (const [promise, held] of running)
      if (!told.has(promise)) {
        told.add(promise);
        waiting?.(held);
      }
    await Promise.allSettled([...running.keys()]);
  }
}

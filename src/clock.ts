import { setTimeout as delay } from "node:timers/promises";

/**
 * Time as svc reads it: the wall clock, one-shot timers and an abortable sleep. The gateway makes one at
 * its root and hands it to every timing rule (rate windows, coalescing windows, cron ticks, delivery
 * retries, the stop's drain bound), so tests drive all of them with a fake clock instead of sleeping.
 */
export interface Clock {
  now(): number;
  /**
   * Milliseconds on a clock that is never set (`performance.now`): what durations are measured on, so a
   * step of the wall clock (NTP, a VM resumed) neither makes one negative nor an hour long.
   */
  elapsed(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  /** Resolves after `ms`; rejects with the signal's reason when it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The process's real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, signal === undefined ? {} : { signal });
  },
};

/** `sleep` built on a clock's own timers (a fake clock's sleeps end when the test advances it). */
export function sleepOn(timers: Pick<Clock, "setTimeout" | "clearTimeout">): Clock["sleep"] {
  return (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        timers.clearTimeout(id);
        reject(signal?.reason);
      };
      const id = timers.setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
}

/**
 * `AbortSignal.timeout` for any `ms` a setting in seconds gives: it throws a RangeError on a fraction
 * (`2.01 * 1000` is 2009.9999999999998), which failed every call a fractional `timeout_seconds` bounded.
 */
export function timeoutSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(Math.max(1, Math.round(ms)));
}

/**
 * Runs `task` with a signal of its own that follows `outer` (a run's signal, a call's deadline, a stop's)
 * only until the task settles, when its listeners are removed. Two things this avoids:
 * - The MCP SDK's `request` never removes the abort listener it adds to the signal it is given, so a
 *   signal that outlives the request (an agent run's, aborted when the run ends; a deadline that fires
 *   later) sent `notifications/cancelled` for requests the server had answered long before.
 * - `AbortSignal.any` keeps a WeakRef of each signal it makes in every source signal (a composite's
 *   sources included) for as long as the source lives, and Node 20 never drops it, not even once the made
 *   signal is collected: a long-lived signal given to each run (the run queue's stop, cron's, the shared
 *   queue's) grew by a few entries per run, for the life of the gateway.
 */
export async function scopedSignal<T>(
  outer: readonly AbortSignal[],
  task: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  for (const signal of outer) {
    if (signal.aborted) controller.abort(signal.reason);
    else follow(signal, controller);
  }
  try {
    return await task(controller.signal);
  } finally {
    for (const signal of outer) unfollow(signal, controller);
  }
}

/**
 * The scoped signals following an outer one, all reached through one listener on it: a listener per task
 * put more than ten on a signal many tasks share at once (cron's jobs due in the same minute, the shared
 * queue's runs, a run's tool calls), and Node printed `MaxListenersExceededWarning: Possible EventTarget
 * memory leak detected` on the gateway's stderr, though each was removed when its task settled.
 */
interface Following {
  readonly controllers: Set<AbortController>;
  readonly listener: () => void;
}

const followed = new WeakMap<AbortSignal, Following>();

function follow(signal: AbortSignal, controller: AbortController): void {
  let following = followed.get(signal);
  if (following === undefined) {
    const controllers = new Set<AbortController>();
    const listener = () => {
      followed.delete(signal);
      for (const each of controllers) each.abort(signal.reason);
    };
    following = { controllers, listener };
    followed.set(signal, following);
    signal.addEventListener("abort", listener, { once: true });
  }
  following.controllers.add(controller);
}

/** Stops following; the listener goes with the last follower (a timeout signal with one is kept alive). */
function unfollow(signal: AbortSignal, controller: AbortController): void {
  const following = followed.get(signal);
  if (following === undefined) return;
  following.controllers.delete(controller);
  if (following.controllers.size > 0) return;
  followed.delete(signal);
  signal.removeEventListener("abort", following.listener);
}

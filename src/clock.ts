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
  const abort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const signal of outer) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener("abort", abort, { once: true });
  }
  try {
    return await task(controller.signal);
  } finally {
    for (const signal of outer) signal.removeEventListener("abort", abort);
  }
}

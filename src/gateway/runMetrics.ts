import { NOT_RUN, type QueuedRun, type RunExecutor, type RunQueue } from "../actors/runs.js";
import { RunFailedAtStop, RunKeptForRestart } from "../errors.js";
import type { GatewayMetrics, RunDepth } from "../io/metrics/gatewayMetrics.js";

/** The run queue's depth, for the `svc_runs_waiting` / `svc_runs_active` / `svc_deliveries_retrying` gauges. */
export function runDepth(queue: RunQueue): RunDepth {
  return { waiting: queue.waiting.length, active: queue.active.size, retrying: queue.retrying.size };
}

/**
 * Runs `run`, observing its duration and outcome in `svc_run_duration_seconds` when metrics are on, and its
 * end. A run the gateway's stop cut short (it threw with `stopped` aborted: past the drain timeout) neither
 * failed nor finished: it is saved and runs again (docs/webhook.md), so it is neither counted nor recorded,
 * as the journal does not record it finished. One that returned is counted and recorded, stop or not, as
 * the journal records it finished: a mail that some recipients got as the stop cut its retry short. So
 * is a failed run whose notice went out so (`RunFailedAtStop`): counted and recorded failed.
 */
export async function timedRun<T>(
  metrics: GatewayMetrics | undefined,
  /** Milliseconds on a clock that is never set (`Clock.elapsed`), so a step of the wall clock is not timed. */
  now: () => number,
  run: () => Promise<T>,
  /** The run's end for the delivery history: no error when it succeeded. */
  onEnd?: (err: unknown) => void,
  stopped?: AbortSignal,
): Promise<T> {
  if (metrics === undefined && onEnd === undefined) return run();
  const started = now();
  try {
    const result = await run();
    // Dropped before anything ran: no run to count.
    if (result === NOT_RUN) return result;
    metrics?.runFinished("ok", (now() - started) / 1000);
    onEnd?.(undefined);
    return result;
  } catch (err) {
    if (endedFailed(err, stopped)) {
      metrics?.runFinished("failed", (now() - started) / 1000);
      onEnd?.(err ?? new Error("failed"));
    }
    throw err;
  }
}

/**
 * `timedRun` around every run of `execute`, made once: a run allocates no closure of its own for its timing
 * or its end (the accepted path runs one per request). The same counts and ends as `timedRun`, with the
 * run's signal as `stopped`.
 */
export function timedRuns(
  metrics: GatewayMetrics | undefined,
  now: () => number,
  execute: RunExecutor,
  onEnd?: (run: QueuedRun, err: unknown) => void,
): RunExecutor {
  if (metrics === undefined && onEnd === undefined) return execute;
  return async (run, signal, slot) => {
    const started = now();
    try {
      const result = await execute(run, signal, slot);
      if (result === NOT_RUN) return result;
      metrics?.runFinished("ok", (now() - started) / 1000);
      onEnd?.(run, undefined);
      return result;
    } catch (err) {
      if (endedFailed(err, signal)) {
        metrics?.runFinished("failed", (now() - started) / 1000);
        onEnd?.(run, err ?? new Error("failed"));
      }
      throw err;
    }
  };
}

/**
 * Whether a run that threw ended failed: not cut short by the gateway's stop (`stopped` aborted) nor kept
 * for the next start, or failed with its notice delivered as the stop came.
 */
function endedFailed(err: unknown, stopped: AbortSignal | undefined): boolean {
  if (err instanceof RunFailedAtStop) return true;
  return stopped?.aborted !== true && !(err instanceof RunKeptForRestart);
}

import { NOT_RUN, type RunQueue } from "../actors/runs.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";

/** The run queue's depth, for the `svc_runs_waiting` / `svc_runs_active` gauges. */
export function runDepth(queue: RunQueue): { waiting: number; active: number } {
  return { waiting: queue.waiting.length, active: queue.active.size };
}

/** Runs `run`, observing its duration and outcome in `svc_run_duration_seconds` when metrics are on, and its end. */
export async function timedRun<T>(
  metrics: GatewayMetrics | undefined,
  now: () => number,
  run: () => Promise<T>,
  /** The run's end for the delivery history: no error when it succeeded. */
  onEnd?: (err: unknown) => void,
): Promise<T> {
  if (metrics === undefined && onEnd === undefined) return run();
  const started = now();
  try {
    const result = await run();
    if (result === NOT_RUN) return result; // dropped before anything ran: no run to count
    metrics?.runFinished("ok", (now() - started) / 1000);
    onEnd?.(undefined);
    return result;
  } catch (err) {
    metrics?.runFinished("failed", (now() - started) / 1000);
    onEnd?.(err ?? new Error("failed"));
    throw err;
  }
}

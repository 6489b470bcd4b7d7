import { collectDefaultMetrics, Registry } from "prom-client";

let processRegistry: Registry | undefined;

/**
 * The process's own metrics, prom-client's defaults (`process_*` CPU, memory, open files, start time;
 * `nodejs_*` event-loop lag, heap, GC), shown under the gateway's. Made once per process: their GC observer
 * and event-loop monitor are never removed, and every gateway in a process is the same process. Made when
 * the gateway's metrics are, not at the first scrape, so that scrape's event-loop delays have samples.
 */
export function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** A sample whose value prom-client wrote as `Nan`: the text format spells it `NaN`, strict parsers refuse `Nan`. */
const NAN_SAMPLE = / Nan$/gm;

/**
 * An event-loop delay window with no sample (a scrape less than the monitor's 10 ms after the one before):
 * Node reports its minimum as the largest int64 of nanoseconds, 292 years; no delay was measured, so NaN.
 */
const EMPTY_WINDOW_MIN = /^(nodejs_eventloop_lag_min_seconds(?:\{[^}\n]*\})?) 9223372036\.854776$/m;

/** The exposition text of the process's metrics, every value one the text format allows. */
export async function processMetricsText(): Promise<string> {
  const text = await processMetrics().metrics();
  return text.replace(NAN_SAMPLE, " NaN").replace(EMPTY_WINDOW_MIN, "$1 NaN");
}

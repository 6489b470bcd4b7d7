import { collectDefaultMetrics, Registry } from "prom-client";

let processRegistry: Registry | undefined;

/**
 * The process's own metrics, prom-client's defaults (`process_*` CPU, memory, open files, start time;
 * `nodejs_*` event-loop lag, heap, GC), shown under the gateway's. Made once per process: their GC observer
 * and event-loop monitor are never removed, and every gateway in a process is the same process.
 */
export function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

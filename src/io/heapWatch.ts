import { constants, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import type { Clock } from "../clock.js";

/** Above this share of its limit the heap is short: new webhook requests are refused (503). */
export const HEAP_SHORT_SHARE = 0.75;
/** At or below this share a short heap has room again (below the refusing share, so a heap hovering at it does not flap). */
export const HEAP_RECOVERED_SHARE = 0.7;
/** How often the heap is read to see it has room again: on a timer, never per request. */
export const HEAP_SAMPLE_MS = 100;

export interface HeapReading {
  /** Bytes in use on the JavaScript heap (live and not yet collected). */
  readonly used: number;
  /** The most the heap may hold (`--max-old-space-size` and the young generation). */
  readonly limit: number;
}

export function readHeap(): HeapReading {
  const stats = getHeapStatistics();
  return { used: stats.used_heap_size, limit: stats.heap_size_limit };
}

export interface HeapWatchOptions {
  readonly timers: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** The heap as it is now (tests give their own readings). */
  readonly read?: () => HeapReading;
  readonly sampleMs?: number;
  /**
   * Calls `listener` after each full (mark-compact) garbage collection; returns how to stop. Only a reading
   * taken then starts refusing: any other counts garbage the next collection frees.
   */
  readonly afterFullCollections?: (listener: () => void) => () => void;
  /** The heap passed HEAP_SHORT_SHARE: refusing starts. */
  onShort(reading: HeapReading): void;
  /** The heap is back at or below HEAP_RECOVERED_SHARE: refusing ends; `refused` requests were refused meanwhile. */
  onRecovered(reading: HeapReading, refused: number): void;
}

export interface HeapWatch {
  /** Whether this request is to be refused for want of memory (counted when it is): one field read. */
  refuse(): boolean;
  stop(): void;
}

/** V8's full collections, as Node reports them (a `gc` performance entry of kind major). */
export function afterFullCollections(listener: () => void): () => void {
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        listener();
        return;
      }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}

/**
 * Watches the JavaScript heap: a gateway whose heap nears its limit would otherwise take bodies until V8
 * spends all its time collecting and then aborts (`FATAL ERROR: … JavaScript heap out of memory`), losing
 * every event not yet made durable. Refusing starts on a reading taken right after a full collection (what
 * is left then is live: a heap full of garbage between two collections is not short), and ends on any
 * reading at HEAP_RECOVERED_SHARE or less, taken then or on a timer every HEAP_SAMPLE_MS (an idle heap may
 * not be collected for a long time). A request pays one boolean read.
 */
export function watchHeap(options: HeapWatchOptions): HeapWatch {
  const read = options.read ?? readHeap;
  const sampleMs = options.sampleMs ?? HEAP_SAMPLE_MS;
  let short = false;
  let refused = 0;
  let stopped = false;
  let timer: unknown;
  const recoverIfRoom = (reading: HeapReading) => {
    if (short && reading.used / reading.limit <= HEAP_RECOVERED_SHARE) {
      short = false;
      options.onRecovered(reading, refused);
    }
  };
  const afterCollection = () => {
    const reading = read();
    if (!short && reading.used / reading.limit > HEAP_SHORT_SHARE) {
      short = true;
      refused = 0;
      options.onShort(reading);
    } else recoverIfRoom(reading);
  };
  const arm = () => {
    timer = options.timers.setTimeout(tick, sampleMs);
    // The real clock's timer must not keep a process alive that has nothing else to do.
    (timer as { unref?: () => void } | undefined)?.unref?.();
  };
  function tick() {
    if (stopped) return;
    if (short) recoverIfRoom(read());
    arm();
  }
  const unobserve = (options.afterFullCollections ?? afterFullCollections)(afterCollection);
  arm();
  return {
    refuse() {
      if (!short) return false;
      refused++;
      return true;
    },
    stop() {
      stopped = true;
      unobserve();
      options.timers.clearTimeout(timer);
    },
  };
}

/** A share of the heap's limit as a whole percentage, and bytes as MB, for the log lines. */
export function heapShare(reading: HeapReading): string {
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  return `${Math.round((reading.used / reading.limit) * 100)}% of its limit (${mb(reading.used)} of ${mb(reading.limit)} MB)`;
}

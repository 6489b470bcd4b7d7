import { getHeapStatistics } from "node:v8";
import type { Clock } from "../clock.js";

/** Above this share of its limit the heap is short: new webhook requests are refused (503). */
export const HEAP_SHORT_SHARE = 0.75;
/** At or below this share a short heap has room again (below the refusing share, so a heap hovering at it does not flap). */
export const HEAP_RECOVERED_SHARE = 0.7;
/** How often the heap is read: on a timer, never per request. */
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

/**
 * Watches the JavaScript heap on a timer (every HEAP_SAMPLE_MS: a small heap fills in well under a second): a gateway whose heap nears its limit
 * would otherwise take bodies until V8 spends all its time collecting and then aborts (`FATAL ERROR: …
 * JavaScript heap out of memory`), losing every event not yet made durable. Reading the heap costs
 * microseconds, ten times a second whatever the load; a request pays one boolean read.
 */
export function watchHeap(options: HeapWatchOptions): HeapWatch {
  const read = options.read ?? readHeap;
  const sampleMs = options.sampleMs ?? HEAP_SAMPLE_MS;
  let short = false;
  let refused = 0;
  let stopped = false;
  let timer: unknown;
  const sample = () => {
    const reading = read();
    const share = reading.used / reading.limit;
    if (!short && share > HEAP_SHORT_SHARE) {
      short = true;
      refused = 0;
      options.onShort(reading);
    } else if (short && share <= HEAP_RECOVERED_SHARE) {
      short = false;
      options.onRecovered(reading, refused);
    }
  };
  const arm = () => {
    timer = options.timers.setTimeout(tick, sampleMs);
    // The real clock's timer must not keep a process alive that has nothing else to do.
    (timer as { unref?: () => void } | undefined)?.unref?.();
  };
  function tick() {
    if (stopped) return;
    sample();
    arm();
  }
  sample();
  arm();
  return {
    refuse() {
      if (!short) return false;
      refused++;
      return true;
    },
    stop() {
      stopped = true;
      options.timers.clearTimeout(timer);
    },
  };
}

/** A share of the heap's limit as a whole percentage, and bytes as MB, for the log lines. */
export function heapShare(reading: HeapReading): string {
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  return `${Math.round((reading.used / reading.limit) * 100)}% of its limit (${mb(reading.used)} of ${mb(reading.limit)} MB)`;
}

import type { CronJob, CronStore } from "../io/stores/cronStore.js";

export type LastRun = NonNullable<CronJob["last_run"]>;

export interface LastRunWriter {
  /** Queues `last_run` of job `id`; only the latest one per job is written. */
  record(store: CronStore, id: string, lastRun: LastRun): void;
  /** Resolves once every queued `last_run` is written. */
  idle(): Promise<void>;
}

/** At most one write per job this often while runs keep finishing (the first one waits only a turn). */
export const LAST_RUN_WRITE_GAP_MS = 50;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Writes jobs' `last_run` behind their runs. A store write holds the lock and fsyncs on the gateway's
 * thread (~3 ms), so a burst of events firing one job cost that per event and held every other request
 * meanwhile; now a job's `last_run` is written at most every LAST_RUN_WRITE_GAP_MS, the latest one.
 */
export function createLastRunWriter(
  /** Writes the `last_run` of each job of `lastRuns` (by id) in one write of `store`. */
  write: (store: CronStore, lastRuns: ReadonlyMap<string, LastRun>) => Promise<void>,
): LastRunWriter {
  const queued = new Map<string, { store: CronStore; id: string; lastRun: LastRun }>();
  let flushing: Promise<void> | undefined;
  let lastWrite = Number.NEGATIVE_INFINITY;
  const flush = async () => {
    while (queued.size > 0) {
      const wait = lastWrite + LAST_RUN_WRITE_GAP_MS - performance.now();
      await (wait > 0 ? sleep(wait) : nextTurn());
      lastWrite = performance.now();
      // One write per store, not per job: 500 jobs ending at one minute were 500 writes of the whole file.
      const byStore = new Map<string, { store: CronStore; lastRuns: Map<string, LastRun> }>();
      for (const { store, id, lastRun } of queued.values()) {
        const group = byStore.get(store.path) ?? { store, lastRuns: new Map<string, LastRun>() };
        group.lastRuns.set(id, lastRun);
        byStore.set(store.path, group);
      }
      queued.clear();
      for (const { store, lastRuns } of byStore.values()) await write(store, lastRuns);
    }
  };
  const start = () => {
    flushing = flush().finally(() => {
      flushing = undefined;
      // Queued after the loop saw an empty queue, before this ran.
      if (queued.size > 0) start();
    });
  };
  return {
    record(store, id, lastRun) {
      queued.set(`${store.path}\u0000${id}`, { store, id, lastRun });
      if (flushing === undefined) start();
    },
    async idle() {
      while (flushing !== undefined) await flushing;
    },
  };
}

import type { Worker } from "bullmq";

/** How long a worker whose fetch Redis refused waits before it asks again. */
export const REFUSAL_BACKOFF_MS = 1000;

/**
 * BullMQ asks Redis for the next job again at once after a refusal (it waits only after a connection error):
 * a full Redis (OOM refuses its scripts), or one refusing a command the worker needs, had each worker ask
 * in a loop, a CPU core each, for as long as the refusal lasted. What to call on each of the worker's
 * refusals: it pauses the worker (jobs already running go on) and resumes it `ms` later, unless `current()`
 * says the worker was stopped meanwhile.
 */
export function refusalBackoff(
  worker: Pick<Worker, "pause" | "resume">,
  current: () => boolean,
  ms = REFUSAL_BACKOFF_MS,
): () => void {
  let waiting = false;
  return () => {
    if (waiting) return;
    waiting = true;
    void worker
      .pause(true)
      .catch(() => {})
      .then(() => {
        setTimeout(() => {
          waiting = false;
          if (current()) Promise.resolve(worker.resume()).catch(() => {});
        }, ms).unref();
      });
  };
}

/**
 * Resolves once `ready` has, or rejects with `signal`'s reason once it aborts (at once when it already has),
 * its listener removed after either. `ready` must not reject.
 */
export function untilReady(ready: Promise<void>, signal: AbortSignal | null | undefined): Promise<void> {
  if (signal == null) return ready;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    void ready.then(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    });
  });
}

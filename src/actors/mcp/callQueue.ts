/** How a queued task is given up when its caller's signal aborts before its turn comes. */
export interface QueueWait {
  readonly signal: AbortSignal;
  /** The error the task's promise rejects with when it is given up before it started. */
  readonly giveUp: () => Error;
}

/**
 * Runs tasks one at a time (per server), or all at once when `parallel`. A failed task never blocks the
 * next. A task whose `wait.signal` aborts while it waits for its turn (an earlier call of another run, which
 * its own run does not cut short) is given up at once and never started; the order of the others is kept.
 */
export class CallQueue {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly parallel: boolean) {}

  run<T>(task: () => Promise<T>, wait?: QueueWait): Promise<T> {
    if (this.parallel) return task();
    let started = false;
    const start = () => {
      if (wait?.signal.aborted === true) return Promise.reject(wait.giveUp());
      started = true;
      return task();
    };
    const result = this.tail.then(start, start);
    this.tail = result.catch(() => undefined);
    if (wait === undefined) return result;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!started) reject(wait.giveUp());
      };
      wait.signal.addEventListener("abort", onAbort, { once: true });
      void result.then(resolve, reject).finally(() => wait.signal.removeEventListener("abort", onAbort));
    });
  }
}

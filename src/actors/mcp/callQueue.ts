/** Runs tasks one at a time (per server), or all at once when `parallel`. A failed task never blocks the next. */
export class CallQueue {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly parallel: boolean) {}

  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.parallel) return task();
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

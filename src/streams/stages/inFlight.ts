/**
 * Direct deliveries under way, by idempotency key. A duplicate that arrives while the original is still
 * being delivered waits for its outcome instead of being answered `duplicate` at once: when the original
 * then fails (502, its id forgotten so a retry is processed), a `duplicate` answer would have told a
 * sender that retried on a timeout that the event was handled, and it would be lost.
 */
export class DirectDeliveries {
  private readonly pending = new Map<string, { promise: Promise<boolean>; settle: (ok: boolean) => void }>();

  begin(key: string): void {
    let settle: (ok: boolean) => void = () => {};
    const promise = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    this.pending.set(key, { promise, settle });
  }

  end(key: string, ok: boolean): void {
    const entry = this.pending.get(key);
    this.pending.delete(key);
    entry?.settle(ok);
  }

  /** Resolves true when the delivery under way for `key` succeeded; undefined when none is. */
  outcomeOf(key: string): Promise<boolean> | undefined {
    return this.pending.get(key)?.promise;
  }
}

import type { MaybePromise } from "./stateUnavailable.js";

export interface IdempotencyStore {
  /** Records the key; `true` when it was already recorded (a duplicate). A Promise when shared (Redis). */
  checkAndAdd(key: string): MaybePromise<boolean>;
  /** Forgets a recorded key, so the sender's retry is processed as new. */
  forget(key: string): void;
  /** A shared store (Redis): the key's direct delivery begins here, so other instances' duplicates wait. */
  begin?(key: string): void;
  /** A shared store: the key's direct delivery succeeded. */
  delivered?(key: string): void;
  /** A shared store: the outcome of a delivery of `key` under way on another instance, if one is. */
  elsewhere?(key: string): Promise<boolean> | undefined;
}

/**
 * The idempotency state of the keys this process handles. The store (the in-memory seen cache, or the
 * shared one) says whether a key was recorded; a key whose direct delivery is under way is `pending`
 * until it ends `done` (kept: a repeat is answered `duplicate`) or `failed` (forgotten: a repeat is
 * processed again). A duplicate that arrives while its key is pending waits for that outcome instead of
 * being answered `duplicate` at once: had the original then failed (502), a `duplicate` answer would
 * have told a sender that retried on a timeout that the event was handled, and it would be lost.
 * Pending keys are local: the delivery under way runs in this process. A shared store also tells the other
 * instances (`begin`, `delivered`) and gives the outcome of one under way elsewhere (`elsewhere`).
 */
export interface IdempotencyRecord {
  checkAndAdd(key: string): MaybePromise<boolean>;
  /** The key's direct delivery begins: it is pending. */
  begin(key: string): void;
  /** The key's direct delivery ended: done when delivered, else failed (the key is forgotten). */
  end(key: string, delivered: boolean): void;
  /** `pending` while a delivery of `key` is under way; otherwise the store's word (done) or nothing (failed). */
  isPending(key: string): boolean;
  /** Resolves true when the delivery pending for `key` succeeds; undefined when none is pending. */
  outcomeOf(key: string): Promise<boolean> | undefined;
}

interface Pending {
  readonly promise: Promise<boolean>;
  readonly settle: (delivered: boolean) => void;
}

export function createIdempotencyRecord(store: IdempotencyStore): IdempotencyRecord {
  const pending = new Map<string, Pending>();
  return {
    checkAndAdd: (key) => store.checkAndAdd(key),
    begin(key) {
      let settle: (delivered: boolean) => void = () => {};
      const promise = new Promise<boolean>((resolve) => {
        settle = resolve;
      });
      pending.set(key, { promise, settle });
      store.begin?.(key);
    },
    end(key, delivered) {
      const entry = pending.get(key);
      pending.delete(key);
      if (!delivered) store.forget(key);
      else store.delivered?.(key);
      entry?.settle(delivered);
    },
    isPending: (key) => pending.has(key),
    outcomeOf(key) {
      return pending.get(key)?.promise ?? store.elsewhere?.(key);
    },
  };
}

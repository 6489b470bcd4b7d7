import { isPromise, type MaybePromise } from "./stateUnavailable.js";

/**
 * How a direct delivery ended, as the duplicates that waited for it are told: true delivered, false failed
 * (502), "stopped" when the gateway's stop ended its wait and nothing was sent (503 Shutting down). The key
 * is forgotten unless delivered, so the sender's retry delivers it.
 */
export type DirectOutcome = boolean | "stopped";

export interface IdempotencyStore {
  /** Records the key; `true` when it was already recorded (a duplicate). A Promise when shared (Redis). */
  checkAndAdd(key: string): MaybePromise<boolean>;
  /** Forgets a recorded key, so the sender's retry is processed as new. */
  forget(key: string): void;
  /** A shared store (Redis): the key's direct delivery begins here, so other instances' duplicates wait. */
  begin?(key: string): void;
  /** A shared store: the key's direct delivery succeeded. */
  delivered?(key: string): void;
  /** A shared store: the key's direct delivery was stopped (nothing sent; its duplicates elsewhere are told). */
  stopped?(key: string): void;
  /** A shared store: the outcome of a delivery of `key` under way on another instance, if one is. */
  elsewhere?(key: string): Promise<DirectOutcome> | undefined;
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
 *
 * A shared store answers `checkAndAdd` later (a round trip, and for a record not yet marked as delivering
 * a wait of its own): a duplicate sent with its original may learn that it is one only after the original's
 * delivery, begun here meanwhile, has ended. The duplicate waits for that delivery all the same: its
 * outcome is what `outcomeOf` gives it, and when the delivery failed and the store then recorded the key
 * anew for this duplicate, that record is forgotten (the sender's retry delivers), never delivered twice.
 */
export interface IdempotencyRecord {
  checkAndAdd(key: string): MaybePromise<boolean>;
  /**
   * The key's direct delivery begins: it is pending. True when the store keeps the id itself until the
   * delivery ends (a shared store that tells the other instances).
   */
  begin(key: string): boolean;
  /** The key's direct delivery ended: done when delivered, else failed or stopped (the key is forgotten). */
  end(key: string, outcome: DirectOutcome): void;
  /** `pending` while a delivery of `key` is under way; otherwise the store's word (done) or nothing (failed). */
  isPending(key: string): boolean;
  /** Resolves to how the delivery pending for `key` ends (true: delivered); undefined when none is pending. */
  outcomeOf(key: string): Promise<DirectOutcome> | undefined;
}

interface Pending {
  readonly promise: Promise<DirectOutcome>;
  readonly settle: (outcome: DirectOutcome) => void;
}

/** The shared checks of a key still out: the delivery of the key begun here while they were, if one was. */
interface Checking {
  waiting: number;
  began?: Promise<DirectOutcome>;
}

/** The outcome a duplicate's check found (a delivery begun here meanwhile), until its `outcomeOf` takes it. */
interface HandedOver {
  readonly outcome: Promise<DirectOutcome>;
  takers: number;
}

export function createIdempotencyRecord(store: IdempotencyStore): IdempotencyRecord {
  const pending = new Map<string, Pending>();
  const checking = new Map<string, Checking>();
  const handedOver = new Map<string, HandedOver>();
  const handOver = (key: string, outcome: Promise<DirectOutcome>) => {
    const entry = handedOver.get(key);
    if (entry?.outcome === outcome) entry.takers += 1;
    else handedOver.set(key, { outcome, takers: 1 });
  };
  const take = (key: string): Promise<DirectOutcome> | undefined => {
    const entry = handedOver.get(key);
    if (entry === undefined) return undefined;
    entry.takers -= 1;
    if (entry.takers <= 0) handedOver.delete(key);
    return entry.outcome;
  };
  return {
    checkAndAdd(key) {
      const seen = store.checkAndAdd(key);
      if (!isPromise(seen)) return seen;
      const entry = checking.get(key) ?? { waiting: 0 };
      entry.waiting += 1;
      checking.set(key, entry);
      const settled = () => {
        entry.waiting -= 1;
        if (entry.waiting === 0 && checking.get(key) === entry) checking.delete(key);
      };
      return seen.then(
        (duplicate) => {
          settled();
          const began = entry.began;
          if (began === undefined) return duplicate;
          // Recorded anew once the delivery begun here failed and forgot the key: not this request's to deliver.
          if (!duplicate) store.forget(key);
          handOver(key, began);
          return true;
        },
        (err: unknown) => {
          settled();
          throw err;
        },
      );
    },
    begin(key) {
      let settle: (outcome: DirectOutcome) => void = () => {};
      const promise = new Promise<DirectOutcome>((resolve) => {
        settle = resolve;
      });
      pending.set(key, { promise, settle });
      const out = checking.get(key);
      if (out !== undefined) out.began = promise;
      if (store.begin === undefined) return false;
      store.begin(key);
      return true;
    },
    end(key, outcome) {
      const entry = pending.get(key);
      pending.delete(key);
      if (outcome === true) store.delivered?.(key);
      else {
        if (outcome === "stopped") store.stopped?.(key);
        store.forget(key);
      }
      entry?.settle(outcome);
    },
    isPending: (key) => pending.has(key),
    outcomeOf(key) {
      const handed = take(key);
      return pending.get(key)?.promise ?? handed ?? store.elsewhere?.(key);
    },
  };
}

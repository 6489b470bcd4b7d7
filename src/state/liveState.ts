import { type PendingRun, withReadableReply } from "../io/stores/pendingRuns.js";
import { ChurnMap } from "../streams/churnTables.js";
import type { JournaledKeys } from "../streams/seenCache.js";
import { seenKey } from "../streams/stages/idempotency.js";
import { firstOf } from "./firstOf.js";
import { SeenKeyMap } from "./seenKeys.js";
import type { Recovered, StoredGroup } from "./store.js";

/**
 * The journal's records (JSON bodies). Each is a whole fact that can be replayed twice without harm:
 * a later record about the same key replaces or removes the earlier one.
 */
export type JournalRecord =
  | { t: "a"; run: PendingRun; at: number } // run accepted (again by a stop: with the reply it was delivering)
  | { t: "f"; k: string; w?: 1 } // run finished (`w`: its request was answered 503, its key forgotten)
  | { t: "s"; k: string; at: number; r?: 1; m?: 1 } // idempotency key (`r`: of an agent run or group; `m`: an id the gateway made)
  | { t: "d"; k: string; at: number } // direct delivery done
  | { t: "g"; g: StoredGroup } // coalescing group state
  | { t: "x"; id: string }; // coalescing group fired

/** What a record says of an idempotency key (`JournaledKeys` flags). */
const DELIVERED = 1;
const RUN = 2;

/** A run's key in the journal: its idempotency key (the same string, made once per accepted event). */
export const runKey = seenKey;

export { SEEN_MAX, SEEN_TTL_MS } from "./seenKeys.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function isRun(v: unknown): v is PendingRun {
  return (
    isObject(v) &&
    isString(v.profile) &&
    isString(v.routeName) &&
    (v.event === undefined || isString(v.event)) &&
    isString(v.deliveryId) &&
    isString(v.prompt) &&
    isObject(v.extra) &&
    (v.unfilled === undefined || (Array.isArray(v.unfilled) && v.unfilled.every(isString))) &&
    isNumber(v.receivedAt) &&
    (v.cronJob === undefined || isString(v.cronJob))
  );
}

function isGroup(v: unknown): v is StoredGroup {
  return (
    isObject(v) &&
    isString(v.id) &&
    isRun(v.latest) &&
    isNumber(v.merged) &&
    isNumber(v.firstAt) &&
    isNumber(v.lastAt)
  );
}

/** Whether replay can apply `record`: not one a newer version wrote (another `t`), nor one edited by hand. */
export function understood(record: unknown): record is JournalRecord {
  if (!isObject(record)) return false;
  switch (record.t) {
    case "a":
      return isRun(record.run) && isNumber(record.at);
    case "f":
      return isString(record.k);
    case "s":
    case "d":
      return isString(record.k) && isNumber(record.at);
    case "g":
      return isGroup(record.g);
    case "x":
      return isString(record.id);
    default:
      return false;
  }
}

/** What is live now, mirrored in memory: replayed from the journal at start, restated in each snapshot. */
export class LiveState {
  /** Accepted runs not yet finished: one added and one removed per request (see ChurnMap). */
  readonly runs = new ChurnMap<PendingRun>();
  readonly groups = new Map<string, StoredGroup>();
  /**
   * Idempotency key → first accepted at, delivered directly, and whether it was journaled as an agent run
   * (so a run saved elsewhere under that key was already taken care of). A map of its own while replay
   * rebuilds it; the pipeline's cache once the gateway shares it (`shareSeen`).
   */
  private seen: JournaledKeys = new SeenKeyMap();
  /**
   * The keys of the runs (and groups' latest events) whose delivery id the gateway made (`PendingRun.madeId`),
   * kept apart from `seen` for `recovered().runKeys` alone: a run a stop saved to the pending-runs file that
   * finished within the hour is still not taken twice. No sender sends such an id again, so it takes no room
   * in the pipeline's cache, where it would push out the senders' ids (each then run again on a retry). A map
   * of its own while replay rebuilds it; the ring `shareSeen` is given from then on.
   */
  private made: JournaledKeys = new SeenKeyMap();
  /** Records replay skipped as unreadable (a newer format, a hand edit). */
  ignored = 0;

  /** Applies one record; returns false for one it does not understand (skipped). */
  apply(record: unknown): boolean {
    if (!understood(record)) return this.notUnderstood();
    // A kept reply this version cannot read (a hand edit) is dropped: the run runs its agent again.
    if (record.t === "a" && (record.run.reply !== undefined || record.run.retry !== undefined))
      return this.applyOwn({ ...record, run: withReadableReply(record.run) });
    return this.applyOwn(record);
  }

  /** Applies a record made by this process (of a known shape: not checked again). */
  applyOwn(record: JournalRecord): true {
    switch (record.t) {
      case "a": {
        const key = runKey(record.run.routeName, record.run.deliveryId);
        this.runs.set(key, record.run);
        (record.run.madeId === true ? this.made : this.seen).note(key, record.at, RUN);
        return true;
      }
      case "f":
        if (record.w === 1) this.withdraw(record.k);
        else this.runs.delete(record.k);
        return true;
      case "s":
        // A snapshot's restatement of a made id's run.
        if (record.m === 1) this.made.note(record.k, record.at, RUN);
        else this.seen.note(record.k, record.at, record.r === 1 ? RUN : 0);
        return true;
      case "d":
        this.seen.note(record.k, record.at, DELIVERED);
        return true;
      case "g": {
        const latest = record.g.latest;
        this.groups.set(record.g.id, record.g);
        (latest.madeId === true ? this.made : this.seen).note(
          runKey(latest.routeName, latest.deliveryId),
          record.g.lastAt,
          RUN,
        );
        return true;
      }
      case "x":
        this.groups.delete(record.id);
        return true;
    }
  }

  /**
   * Forgets a run whose request was answered 503 (its record not made durable): its key too, which the
   * sender's retry takes anew, so neither a later snapshot nor a replay restates either.
   */
  withdraw(key: string): void {
    this.runs.delete(key);
    this.seen.delete(key);
    this.made.delete(key);
  }

  /**
   * After a replay: delivery ids saved with a time ahead of `now` (the clock set back while the gateway was
   * down) count from `now`, so the snapshot that follows keeps them an hour from this start, not until the
   * clock reaches their saved time (which a later start would read again). In place: their order is kept.
   */
  notAhead(now: number): void {
    this.seen.notAhead(now);
    this.made.notAhead(now);
  }

  /** Drops idempotency keys older than the hour (and the oldest past the cap). */
  prune(now: number): void {
    this.seen.prune(now);
    this.made.prune(now);
  }

  /**
   * From now on the idempotency keys live in `keys` (the pipeline's cache, which holds the same accepted
   * keys): what replay rebuilt is moved there, so each key is held once. The keys of made ids' runs move to
   * `made` when given (a ring like the cache's, of its own: a Map taking one key in and one out per request
   * is what the cache's ring avoids).
   */
  shareSeen(keys: JournaledKeys, now: number, made?: JournaledKeys): void {
    for (const [key, at, flags] of this.seen.list(now)) keys.note(key, at, flags);
    this.seen = keys;
    if (made === undefined) return;
    for (const [key, at, flags] of this.made.list(now)) made.note(key, at, flags);
    this.made = made;
  }

  /**
   * Records that restate everything live (the start of a new segment), made one at a time: a rotation
   * encodes them in slices while the gateway keeps taking events. A change made while it is being read is
   * also in the records journaled after it began, which follow the snapshot and win on replay (a later
   * record about a key replaces, extends or removes what came before). Each map is read only as far as it
   * was long when reached: entries added later come after those in insertion order and are in those
   * later records, so a burst of new keys cannot keep the snapshot from ending.
   */
  *snapshot(now: number): Generator<JournalRecord> {
    this.prune(now);
    for (const [k, at, flags] of this.seen.list(now)) {
      if (flags & DELIVERED) yield { t: "d", k, at };
      else yield flags & RUN ? { t: "s", k, at, r: 1 } : { t: "s", k, at };
    }
    for (const [k, at] of this.made.list(now)) yield { t: "s", k, at, r: 1, m: 1 };
    for (const g of firstOf(this.groups.values(), this.groups.size)) yield { t: "g", g };
    for (const run of firstOf(this.runs.values(), this.runs.size)) yield { t: "a", run, at: run.receivedAt };
  }

  /**
   * The idempotency keys of the last hour (the oldest past the cap left out), with when each was first
   * accepted and whether it is a direct delivery that was made: what a switch to Redis carries over.
   */
  seenKeys(now: number): Array<[key: string, at: number, delivered: boolean]> {
    this.prune(now);
    return [...this.seen.list(now)].map(([key, at, flags]) => [key, at, (flags & DELIVERED) !== 0]);
  }

  recovered(now: number): Recovered {
    this.prune(now);
    const seen = [...this.seen.list(now)];
    return {
      runs: [...this.runs.values()],
      groups: [...this.groups.values()],
      seen: seen.map(([key, at]) => [key, at]),
      runKeys: [
        ...seen.filter(([, , flags]) => flags & RUN).map(([key]) => key),
        ...[...this.made.list(now)].map(([key]) => key),
      ],
    };
  }

  /** Counts a record replay cannot read and tells the caller it was not applied. */
  private notUnderstood(): boolean {
    this.ignored += 1;
    return false;
  }
}

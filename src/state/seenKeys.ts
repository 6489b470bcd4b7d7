import type { JournaledKeys } from "../streams/seenCache.js";
import { firstOf } from "./firstOf.js";

/** Idempotency keys are kept an hour and at most this many (like the in-memory cache). */
export const SEEN_TTL_MS = 60 * 60 * 1000;
export const SEEN_MAX = 100_000;

/**
 * An idempotency key's entry, packed in one number: the millisecond it was first accepted, times 4, plus
 * the journal's two flags. No object per key: the map holds up to 100,000 keys for an hour, in the old
 * generation the garbage collector marks (measured: ~31 B less kept per accepted request than an object
 * with a boxed time).
 */
type SeenEntry = number;
/**
 * The times are packed as milliseconds after this one (any base packs and unpacks exactly): an entry of
 * the hours around the process's start is then a small integer, which V8 stores in the Map as it is, where
 * a time since 1970 times 4 is a heap number of its own (16 B more kept per key, and one allocation per
 * key recorded).
 */
const SEEN_EPOCH = Math.trunc(Date.now());
const packSeen = (at: number, flags: number): SeenEntry => (Math.trunc(at) - SEEN_EPOCH) * 4 + flags;
const seenAt = (entry: SeenEntry) => Math.floor(entry / 4) + SEEN_EPOCH;
const seenFlags = (entry: SeenEntry) => entry - 4 * Math.floor(entry / 4);

/**
 * The journal's idempotency keys in a map of their own (flags of two bits): what replay rebuilds at start,
 * before the pipeline's cache takes them over (`LiveState.shareSeen`). Insertion order is time order.
 */
export class SeenKeyMap implements JournaledKeys {
  private readonly entries = new Map<string, SeenEntry>();

  note(key: string, at: number, flags: number): void {
    const known = this.entries.get(key);
    // A key is taken once an hour: one seen again past its hour was taken anew (its first entry expired
    // in the live mirror; a replay of both records must not keep the old time, which would expire it).
    if (known === undefined || at >= seenAt(known) + SEEN_TTL_MS) {
      if (known !== undefined) this.entries.delete(key);
      this.entries.set(key, packSeen(at, flags));
      return;
    }
    // What the record adds (flags are two bits: bitwise; the packed time is past 32 bits: arithmetic).
    const added = flags & ~seenFlags(known);
    if (added !== 0) this.entries.set(key, known + added);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (seenAt(entry) > now - SEEN_TTL_MS && this.entries.size <= SEEN_MAX) break;
      this.entries.delete(key);
    }
  }

  /** In place: their order is kept. */
  notAhead(now: number): void {
    for (const [key, entry] of this.entries)
      if (seenAt(entry) > now) this.entries.set(key, packSeen(now, seenFlags(entry)));
  }

  *list(now: number): Generator<[key: string, at: number, flags: number]> {
    for (const [key, entry] of firstOf(this.entries, this.entries.size)) {
      const at = seenAt(entry);
      if (at > now - SEEN_TTL_MS) yield [key, at, seenFlags(entry)];
    }
  }
}

import type { Redis } from "ioredis";
import { CARRIED, DELIVERED } from "./idempotency.js";
import type { RedisKeys } from "./keys.js";

/** A delivery id this home's local backend remembers (`<route>:<delivery id>`), with what is left of its hour. */
export interface CarriedId {
  readonly key: string;
  /** Milliseconds left of its hour (at least 1). */
  readonly leftMs: number;
  /** A direct delivery (`deliver_only`) that was made: recorded as the Redis backend records one. */
  readonly delivered: boolean;
}

/** How many records one pipeline sends: a home holds up to 100,000 ids of each kind. */
const BATCH = 1000;

/** What `carryIds` did: records written, records already there, and the first error of those not written. */
export interface Carried {
  readonly written: number;
  readonly present: number;
  /** Ids not written (Redis refused them, or did not answer): `error` says why. */
  readonly failed: number;
  readonly error?: unknown;
}

/**
 * Writes each id's idempotency record with what is left of its hour (`SET NX PX`), as `delivered` for a
 * direct delivery and `local` (CARRIED) otherwise: a record already there (a request Redis took since, an
 * earlier start's copy) is left as it is. Never rejects: a batch Redis does not answer ends the copy, and
 * the ids not written are counted with the first error.
 */
export async function carryIds(redis: Redis, keys: RedisKeys, ids: readonly CarriedId[]): Promise<Carried> {
  let written = 0;
  let present = 0;
  let error: unknown;
  for (let from = 0; from < ids.length; from += BATCH) {
    const pipeline = redis.pipeline();
    for (const id of ids.slice(from, from + BATCH))
      pipeline.set(keys.seen(id.key), id.delivered ? DELIVERED : CARRIED, "PX", id.leftMs, "NX");
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (err) {
      error ??= err;
      break;
    }
    for (const [err, answer] of results ?? []) {
      if (err !== null) error ??= err;
      else if (answer === "OK") written += 1;
      else present += 1;
    }
  }
  const failed = ids.length - written - present;
  return error === undefined ? { written, present, failed } : { written, present, failed, error };
}

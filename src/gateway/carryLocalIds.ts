import { describeError } from "../errors.js";
import type { Logger } from "../io/log.js";
import type { CarriedId } from "../io/state/redis/carriedIds.js";
import type { RedisState } from "../state/redisState.js";
import { SEEN_TTL_MS } from "../state/seenKeys.js";

/**
 * The delivery ids a `local` start of this home would restore, with what is left of each one's hour at
 * `now`: those of webhook-seen-ids.json (`fileIds`, with their expiry times, as the idempotency cache read
 * them) and the local journal's (`journalIds`, with when each was first accepted). One entry per key: the
 * later expiry, and a direct delivery when the journal says so (the file does not tell).
 */
export function localIdsToCarry(
  fileIds: ReadonlyArray<readonly [key: string, expiresAt: number]>,
  journalIds: ReadonlyArray<readonly [key: string, at: number, delivered: boolean]>,
  now: number,
): CarriedId[] {
  const byKey = new Map<string, { expiresAt: number; delivered: boolean }>();
  const add = (key: string, expiresAt: number, delivered: boolean) => {
    const known = byKey.get(key);
    byKey.set(
      key,
      known === undefined
        ? { expiresAt, delivered }
        : { expiresAt: Math.max(known.expiresAt, expiresAt), delivered: known.delivered || delivered },
    );
  };
  for (const [key, expiresAt] of fileIds) add(key, expiresAt, false);
  for (const [key, at, delivered] of journalIds) add(key, at + SEEN_TTL_MS, delivered);
  const ids: CarriedId[] = [];
  for (const [key, { expiresAt, delivered }] of byKey) {
    // Never longer than the hour from now: a clock set back since must not keep an id for longer.
    const leftMs = Math.min(Math.floor(expiresAt - now), SEEN_TTL_MS);
    if (leftMs >= 1) ids.push({ key, leftMs, delivered });
  }
  return ids;
}

/**
 * A start on Redis after a switch from `local`: the delivery ids the local backend remembers are copied into
 * Redis (before the listener opens), so a sender's retry of an event accepted or delivered there within the
 * hour is `duplicate` here too; said in one INFO line. The local files are left as they are, for a switch back.
 */
export async function carryLocalIds(deps: {
  readonly redis: Pick<RedisState, "carryOver">;
  readonly ids: readonly CarriedId[];
  readonly logger: Logger;
}): Promise<void> {
  const { ids, logger } = deps;
  if (ids.length === 0) return;
  const { written, present, failed, error } = await deps.redis.carryOver(ids);
  if (written + present > 0)
    logger.info(
      `[state] ${written} delivery id(s) of the last hour that state.backend: local remembers in this home carried over into Redis, each for what is left of its hour: a sender's retry of one is a duplicate${present > 0 ? ` (${present} more were in Redis already)` : ""}`,
    );
  if (failed > 0)
    logger.warn(
      { err: describeError(error) },
      `[state] ${failed} delivery id(s) of the last hour that state.backend: local remembers in this home could not be carried over into Redis: a sender's retry of one within the hour runs again — the next start on redis tries again (they stay in this home for a start on local)`,
    );
}

import type { Clock } from "../clock.js";
import type { SvcPaths } from "../config/paths.js";
import { describeError } from "../errors.js";
import type { Logger } from "../io/log.js";
import { readSeenIds, removeSeenIds, saveSeenIds } from "../io/stores/seenIds.js";
import { createSeenCache, type SeenCache } from "../streams/seenCache.js";

/** The idempotency cache keeps 1 hour and at most this many ids; the oldest are evicted first. */
export const SEEN_CACHE_MAX_ENTRIES = 100_000;
const SEEN_TTL_MS = 60 * 60 * 1000;

export interface Idempotency {
  readonly seen: SeenCache;
  /** The file read at start is removed once the listener is up (a crash then cannot replay stale ids). */
  start(): void;
  /** Writes the remembered delivery ids for the next start; a failure is logged once. */
  save(): void;
}

/** The delivery ids seen in the last hour, restored from the last stop and saved at this one. */
export function createIdempotency(deps: {
  paths: SvcPaths;
  logger: Logger;
  clock: Pick<Clock, "now">;
  /** The local journal's directory, which keeps every accepted id too (`state.backend: local`). */
  journal?: string;
}): Idempotency {
  const { paths, logger } = deps;
  const seen = createSeenCache({
    ttlMs: SEEN_TTL_MS,
    maxEntries: SEEN_CACHE_MAX_ENTRIES,
    now: deps.clock.now,
  });
  try {
    seen.restore(readSeenIds(paths.seenIds));
  } catch (err) {
    logger.warn(
      { err: describeError(err) },
      `[webhook] ${paths.seenIds} could not be read; delivery ids seen before the restart are forgotten (their retries will run)`,
    );
  }
  let saveFailed = false;
  return {
    seen,
    start() {
      removeSeenIds(paths.seenIds);
    },
    save() {
      try {
        saveSeenIds(paths.seenIds, seen.entries());
      } catch (err) {
        if (saveFailed) return;
        saveFailed = true;
        logger.warn(
          { err: describeError(err) },
          deps.journal === undefined
            ? `[webhook] delivery ids not saved to ${paths.seenIds}; retries after the restart will run again`
            : `[webhook] delivery ids not saved to ${paths.seenIds}; the journal (${deps.journal}) keeps them, so retries after the restart are still duplicates`,
        );
      }
    },
  };
}

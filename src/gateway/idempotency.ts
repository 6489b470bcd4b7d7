import type { Clock } from "../clock.js";
import type { SvcPaths } from "../config/paths.js";
import { describeError } from "../errors.js";
import type { Logger } from "../io/log.js";
import { readSeenIdsOrMoveAside, removeSeenIds, saveSeenIds } from "../io/stores/seenIds.js";
import type { AcceptedEvent } from "../streams/context.js";
import { createSeenCache, type SeenCache } from "../streams/seenCache.js";
import { seenKey } from "../streams/stages/idempotency.js";

/** The idempotency cache keeps 1 hour and at most this many ids; the oldest are evicted first. */
export const SEEN_CACHE_MAX_ENTRIES = 100_000;
const SEEN_TTL_MS = 60 * 60 * 1000;
/** The WARN that ids were forgotten before their hour is said at most this often. */
const FORGOTTEN_WARN_MS = 60_000;

export interface Idempotency {
  readonly seen: SeenCache;
  /**
   * The file read at start is removed once the listener is up (a crash then cannot replay stale ids). Not
   * called with `state.backend: redis`: the file is the local backend's, left for a switch back.
   */
  start(): void;
  /** Writes the remembered delivery ids for the next start; a failure is logged once. */
  save(): void;
  /**
   * Wraps the direct delivery (`deliver_only`): while one runs, its id is left out of what `save` writes.
   * Its outcome is not known yet (a failed one is forgotten), and a stop's first save comes before the
   * requests in flight are answered: a kill after it (a supervisor's SIGKILL) would leave a delivery never
   * made whose id the next start restores, answering the sender's retry `duplicate` for the hour.
   */
  underway(deliver: (event: AcceptedEvent) => Promise<boolean>): (event: AcceptedEvent) => Promise<boolean>;
}

/** The delivery ids seen in the last hour, restored from the last stop and saved at this one. */
export function createIdempotency(deps: {
  paths: SvcPaths;
  logger: Logger;
  /** `elapsed` (default `now`): the clock the hour runs on while the gateway does. */
  clock: Pick<Clock, "now"> & { readonly elapsed?: Clock["elapsed"] };
  /**
   * The local journal (`state.backend: local`), which keeps every accepted id too: its directory, and how
   * many ids it replayed at this start (none when `state/` was deleted: it keeps none of the file's then).
   */
  journal?: { readonly dir: string; readonly replayedIds: number };
  /** The cache's cap (default SEEN_CACHE_MAX_ENTRIES). */
  maxEntries?: number;
}): Idempotency {
  const { paths, logger } = deps;
  const elapsed = deps.clock.elapsed ?? deps.clock.now;
  const maxEntries = deps.maxEntries ?? SEEN_CACHE_MAX_ENTRIES;
  let warnedAt = Number.NEGATIVE_INFINITY;
  let unsaid = 0;
  const seen = createSeenCache({
    ttlMs: SEEN_TTL_MS,
    maxEntries,
    now: deps.clock.now,
    elapsed,
    onForgotten() {
      unsaid += 1;
      const at = elapsed();
      if (at - warnedAt < FORGOTTEN_WARN_MS) return;
      warnedAt = at;
      logger.warn(
        { forgotten: unsaid },
        `[webhook] ${unsaid} delivery id(s) forgotten before their hour was up: the idempotency cache holds the ${maxEntries} latest (all routes together), and a sender's retry of a forgotten one runs again — said at most once a minute; svc_webhook_delivery_ids_forgotten_total counts them`,
      );
      unsaid = 0;
    },
  });
  seen.restore(
    readSeenIdsOrMoveAside(paths.seenIds, (movedTo, err) => {
      const kept =
        movedTo === paths.seenIds ? "" : ` — the file is kept as ${movedTo}: inspect it, then delete it`;
      logger.warn(
        { err: describeError(err) },
        deps.journal === undefined
          ? `[webhook] ${paths.seenIds} could not be read; delivery ids seen before the restart are forgotten (their retries will run)${kept}`
          : deps.journal.replayedIds === 0
            ? `[webhook] ${paths.seenIds} could not be read, and the journal (${deps.journal.dir}) replayed no delivery ids (it was removed, or started afresh); delivery ids seen before the restart are forgotten (their retries will run)${kept}`
            : `[webhook] ${paths.seenIds} could not be read; the journal (${deps.journal.dir}) keeps the delivery ids seen before the restart, so their retries are still duplicates${kept}`,
      );
    }),
  );
  let saveFailed = false;
  /** Keys of the direct deliveries running now (a duplicate waits for its original: never a second one). */
  const delivering = new Set<string>();
  return {
    seen,
    start() {
      removeSeenIds(paths.seenIds);
    },
    save() {
      try {
        const entries = seen.entries();
        saveSeenIds(
          paths.seenIds,
          delivering.size === 0 ? entries : entries.filter(([key]) => !delivering.has(key)),
        );
      } catch (err) {
        if (saveFailed) return;
        saveFailed = true;
        logger.warn(
          { err: describeError(err) },
          deps.journal === undefined
            ? `[webhook] delivery ids not saved to ${paths.seenIds}; retries after the restart will run again`
            : `[webhook] delivery ids not saved to ${paths.seenIds}; the journal (${deps.journal.dir}) keeps them, so retries after the restart are still duplicates`,
        );
      }
    },
    underway: (deliver) => async (event) => {
      const key = seenKey(event.routeName, event.deliveryId);
      delivering.add(key);
      try {
        return await deliver(event);
      } finally {
        delivering.delete(key);
      }
    },
  };
}

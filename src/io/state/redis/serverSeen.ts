import type { Redis } from "ioredis";
import type { Logger } from "../../log.js";
import {
  evictionPolicy,
  NOEVICTION_FIX,
  persistenceProblem,
  type RedisHealth,
  serverRunId,
} from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** What svc kept in Redis, named when it is lost. */
const HELD =
  "the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held are gone (a sender's retry of an event it had accepted runs as a new one)";
/** The same, when svc's key may have been the only one evicted. */
const MAYBE_HELD =
  "the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held may be gone (a sender's retry of an event it had accepted then runs as a new one)";
const APPENDONLY_FIX =
  "set appendonly yes in its redis.conf (and CONFIG SET appendonly yes for the running server)";

/**
 * Says when Redis lost svc's keys while the gateway ran: a Redis restarted while it was unreachable (told by
 * its run_id, which a network outage or a frozen server keeps) that came back without them, and one whose
 * keys were deleted under the same run_id (FLUSHALL, FLUSHDB, or eviction under an `allkeys-*` policy: the
 * key has no expiry, so a `volatile-*` one never evicts it). Both are told by a key of svc's,
 * `<prefix>:server-seen`: it names the server the instances saw last, and the first instance back after a
 * restart records whether it found it (`kept`) or not (`lost`), for the others.
 */
export async function watchServerSeen(options: {
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly health: RedisHealth;
  readonly logger: Logger;
  readonly label: string;
}): Promise<void> {
  const { redis, health, logger, label } = options;
  const serverSeenKey = options.keys.serverSeen();
  /**
   * Whether the key is known to be in Redis (under the server seen now): written by this instance, or found.
   * One missing while not known was never written — Redis refused the write (full under `noeviction`, a
   * read-only replica) — rather than deleted, and is written again without a word.
   */
  let known = false;
  /** Writes the key; whether Redis took it. */
  const recordSeen = (id: string, held: "kept" | "lost"): Promise<boolean> =>
    redis.set(serverSeenKey, `${id} ${held}`).then(
      () => {
        known = true;
        return true;
      },
      () => false,
    );
  /** Whether Redis (restarted as `now`) kept what it held; undefined when it cannot be read. */
  const keptAcross = async (now: string): Promise<boolean | undefined> => {
    let seen: string | null;
    try {
      seen = await redis.get(serverSeenKey);
    } catch {
      return undefined;
    }
    // Whatever was known of the server before its restart gives way to what the GET found.
    known = seen !== null;
    const [id, held] = (seen ?? "").split(" ");
    // Another instance back first has recorded what it found.
    if (id === now) return held === "kept";
    await recordSeen(now, seen === null ? "lost" : "kept");
    return seen !== null;
  };
  let runId = await serverRunId(redis);
  const seenAtStart = await redis.get(serverSeenKey).catch(() => null);
  known = seenAtStart !== null;
  // What this start found: a Redis that restarted empty holds no such key, and an instance still to notice
  // that restart must read it as lost, whichever instance reached Redis first.
  if (runId !== undefined && seenAtStart?.split(" ")[0] !== runId)
    await recordSeen(runId, seenAtStart === null ? "lost" : "kept");

  /**
   * A restart (its run_id) whose keeping could not be read (the GET failed): the next liveness PING tells it,
   * rather than reading the key missing as deleted under the same server.
   */
  let restartUntold: string | undefined;
  /** Says what Redis, restarted as `now`, kept. */
  const tellRestart = async (now: string): Promise<void> => {
    const kept = await keptAcross(now);
    // A Redis that does not let its settings be read is not said to keep nothing.
    const keepsNothing = (await persistenceProblem(redis, label).catch(() => undefined)) !== undefined;
    // Restarted again meanwhile: that restart is told instead.
    if (runId !== now) return;
    restartUntold = kept === undefined && !keepsNothing ? now : undefined;
    if (kept === true) {
      if (keepsNothing)
        logger.info(
          { redis: label },
          `[state] Redis at ${label} restarted while it was unreachable (its run_id changed) and loaded what it held from a file, though its settings keep nothing across a restart (appendonly no, save "") — ${APPENDONLY_FIX}`,
        );
      return;
    }
    if (keepsNothing)
      logger.warn(
        { redis: label },
        `[state] Redis at ${label} restarted while it was unreachable (its run_id changed), and it keeps nothing across a restart (appendonly no, save ""): ${HELD} — ${APPENDONLY_FIX}`,
      );
    else if (kept === false)
      logger.warn(
        { redis: label },
        `[state] Redis at ${label} restarted while it was unreachable (its run_id changed) without the data it held (what it wrote since its last snapshot or append-only write, or all of it when restarted without its data volume): ${HELD}`,
      );
  };

  /** A restart being looked into (`onBack`): the key may be missing until it is recorded, not flushed. */
  let restartCheck = false;
  health.onBack(() => {
    restartCheck = true;
    void serverRunId(redis)
      .then(async (now) => {
        if (now === undefined || runId === undefined || now === runId) return;
        runId = now;
        await tellRestart(now);
      })
      .finally(() => {
        restartCheck = false;
      });
  });

  // Keys deleted while the server stays the same (its run_id unchanged) are told by the key gone: checked
  // beside the liveness PING, one check at a time.
  let checking = false;
  // Said once: the key is not known again until Redis takes its write (a read-only one is not said so each PING).
  health.onLivenessPing((connection) => {
    if (checking || restartCheck || runId === undefined) return;
    checking = true;
    void (async () => {
      if (restartUntold !== undefined) {
        if (restartUntold === runId) await tellRestart(restartUntold);
        return;
      }
      if ((await connection.exists(serverSeenKey)) === 1) {
        known = true;
        return;
      }
      const now = await serverRunId(connection);
      // Restarted: said by `onBack` once the reconnect is noticed.
      if (restartCheck || now === undefined || now !== runId) return;
      if (known) {
        known = false;
        const policy = await evictionPolicy(connection);
        // Under an allkeys-* policy this key, never read, is among the first evicted: maybe the only one.
        if (policy?.startsWith("allkeys-") === true)
          logger.warn(
            { redis: label },
            `[state] svc's keys in Redis at ${label} were deleted (FLUSHALL/FLUSHDB) or evicted (maxmemory-policy ${policy}) while it kept running (its run_id unchanged): ${MAYBE_HELD} — ${NOEVICTION_FIX}`,
          );
        else
          logger.warn(
            { redis: label },
            `[state] svc's keys in Redis at ${label} were deleted while it kept running (its run_id unchanged: FLUSHALL/FLUSHDB): ${HELD}`,
          );
      }
      await recordSeen(now, "lost");
    })()
      .catch(() => {})
      .finally(() => {
        checking = false;
      });
  });
}

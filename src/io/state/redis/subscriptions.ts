import type { Redis } from "ioredis";
import { storedRecordSecrets } from "../../../config/webhookSecrets.js";
import { SvcError } from "../../../errors.js";
import type { Logger } from "../../log.js";
import { parseKeepingExtraNumbers } from "../../stores/extraNumbers.js";
import {
  activeSubscriptions,
  parseSubscription,
  STALE_SUBSCRIPTION_STORE,
  type Subscription,
  type SubscriptionSource,
  type SubscriptionSourceOptions,
  subscriptionRoute,
  UNREADABLE_RECORD,
} from "../../stores/subscriptions.js";
import type { VersionedSnapshot } from "../../stores/versionedJson.js";
import { isRefusal, refusalHint } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { redisCommandFailure } from "./unreachable.js";

/**
 * Dynamic subscriptions with `state.backend: redis`: a hash `<prefix>:subscriptions` (route name → the
 * record as JSON, the shape of webhook_subscriptions.json) and a counter `<prefix>:subscriptions:revision`
 * that every write increments, so a gateway knows with one GET whether anything changed.
 */
export interface RedisSubscriptionStore {
  /** Names the store in messages: the hash key and the Redis it lives in. */
  readonly path: string;
  read(): Promise<VersionedSnapshot<unknown>>;
  /**
   * Applies `change` to the freshest records and writes what it changed, atomically (WATCH/MULTI):
   * when another writer got in between, `change` runs again on the records as they are now, so a check
   * it makes (assertUnchanged) judges the freshest state. With `expectedRevision`, refuses
   * (`store_conflict`) when the store is no longer at that revision.
   */
  update<R>(
    change: (records: Record<string, unknown>) => R,
    expectedRevision?: string,
  ): Promise<{ result: R; revision: string }>;
}

/** Writers that keep colliding are told to try again rather than spin. */
const MAX_ATTEMPTS = 20;

/**
 * Each field on its own: one that is not JSON (written by another tool, or by hand with redis-cli) is an
 * unreadable record, invalid like any broken record, and costs only its own route, not every other one.
 */
function decode(hash: Record<string, string>): Record<string, unknown> {
  const records: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(hash)) {
    try {
      // An id written unquoted under deliver_extra (a Discord snowflake) is kept as written, as in config.yaml.
      records[name] = parseKeepingExtraNumbers(text);
    } catch {
      records[name] = { [UNREADABLE_RECORD]: true };
    }
  }
  return records;
}

/**
 * A command Redis refused, said with what to do: inside a transaction (a full Redis refuses every command
 * queued in MULTI) EXEC only answers EXECABORT, and the refusal is among its previous errors.
 */
function explained(path: string, err: unknown): unknown {
  const previous = (err as { previousErrors?: unknown[] } | null)?.previousErrors?.[0];
  const refusal = isRefusal(previous) ? previous : err;
  if (!isRefusal(refusal)) return err;
  const reason = (refusal as Error).message;
  return new SvcError(
    "state_refused",
    `${path}: Redis refused the command (${reason}) — ${refusalHint(reason)}`,
    { cause: err },
  );
}

/**
 * The records and the revision they are at, read without a transaction: a full Redis (OOM) refuses every
 * command queued in MULTI, reads too, and a gateway started then would serve none of the subscriptions it
 * holds (404). The revision is read before and after the hash, in one round trip: every write increments
 * it in the transaction that changes the records, so the same revision on both sides is the records'.
 */
async function snapshot(redis: Redis, keys: RedisKeys, path: string): Promise<VersionedSnapshot<unknown>> {
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const replies = await redis
        .pipeline()
        .get(keys.subscriptionsRevision())
        .hgetall(keys.subscriptions())
        .get(keys.subscriptionsRevision())
        .exec();
      const [before, hashReply, after] = replies ?? [];
      const failed = [before, hashReply, after].find((reply) => reply?.[0]);
      if (failed?.[0]) throw failed[0];
      // A write landed between the two reads: read again.
      if (before?.[1] !== after?.[1]) continue;
      return {
        revision: (before?.[1] as string | null) ?? "",
        records: decode((hashReply?.[1] as Record<string, string> | null) ?? {}),
      };
    }
  } catch (err) {
    throw explained(path, err);
  }
  throw new SvcError("store_conflict", `${path}: ${STALE_SUBSCRIPTION_STORE}`);
}

export function createRedisSubscriptionStore(
  redis: Redis,
  keys: RedisKeys,
  label: string,
): RedisSubscriptionStore {
  const path = `${keys.subscriptions()} in Redis at ${label}`;
  return {
    path,
    read: () => snapshot(redis, keys, path),
    async update(change, expectedRevision) {
      try {
        return await transact(change, expectedRevision);
      } catch (err) {
        throw explained(path, err);
      }
    },
  };

  async function transact<R>(
    change: (records: Record<string, unknown>) => R,
    expectedRevision: string | undefined,
  ): Promise<{ result: R; revision: string }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      await redis.watch(keys.subscriptions(), keys.subscriptionsRevision());
      let result: ReturnType<typeof change>;
      let before: Record<string, unknown>;
      let records: Record<string, unknown>;
      try {
        const hash = await redis.hgetall(keys.subscriptions());
        const revision = (await redis.get(keys.subscriptionsRevision())) ?? "";
        if (expectedRevision !== undefined && revision !== expectedRevision)
          throw new SvcError("store_conflict", `${path}: ${STALE_SUBSCRIPTION_STORE}`);
        before = decode(hash);
        records = structuredClone(before);
        result = change(records);
      } catch (err) {
        await redis.unwatch();
        throw err;
      }
      const tx = redis.multi();
      for (const name of Object.keys(before))
        if (!Object.hasOwn(records, name)) tx.hdel(keys.subscriptions(), name);
      for (const [name, record] of Object.entries(records)) {
        const text = JSON.stringify(record);
        if (!Object.hasOwn(before, name) || JSON.stringify(before[name]) !== text)
          tx.hset(keys.subscriptions(), name, text);
      }
      tx.incr(keys.subscriptionsRevision());
      const replies = await tx.exec();
      // null: a watched key changed after it was read — read again and judge the change anew.
      if (replies === null) continue;
      const failed = replies.find(([err]) => err !== null);
      if (failed?.[0]) throw failed[0];
      const revision = replies[replies.length - 1]?.[1];
      return { result, revision: String(revision) };
    }
    throw new SvcError("store_conflict", `${path}: ${STALE_SUBSCRIPTION_STORE}`);
  }
}

export interface RedisSubscriptionSource extends SubscriptionSource {
  /** Loads the current set (the start waits for it), then follows changes in the background. */
  open(): Promise<void>;
  /** The disabled subscriptions of the set last read (`svc webhook disable`): not served, not gone. */
  disabledNames(): readonly string[];
  close(): void;
}

export interface RedisSubscriptionSourceOptions extends SubscriptionSourceOptions {
  /** How often the revision counter is read (one GET); 1 s by default. */
  readonly pollMs?: number;
  /** Each set read from Redis, once it is served. */
  readonly loaded?: () => void;
}

/**
 * What a gateway serves from the Redis store. Requests read the set in memory (no Redis round trip per
 * request); a background timer reads the revision counter and, only when it moved, the whole hash. While
 * Redis is unreachable the last good set is served and the log says so once.
 */
export function createRedisSubscriptionSource(
  redis: Redis,
  keys: RedisKeys,
  label: string,
  logger: Logger,
  options: RedisSubscriptionSourceOptions = {},
): RedisSubscriptionSource {
  const where = `${keys.subscriptions()} in Redis at ${label}`;
  let active = new Map<string, Subscription>();
  let records: Record<string, unknown> | undefined;
  /** The secrets of every record last read, served or not (storedRecordSecrets). */
  let secrets: readonly string[] = [];
  let revision: string | undefined;
  /** Since the last refresh failed: the log says so at the outage's first failure and when it is over. */
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let refreshing = false;

  async function refresh(): Promise<void> {
    const current = (await redis.get(keys.subscriptionsRevision())) ?? "";
    if (current === revision) return;
    const read = await snapshot(redis, keys, where);
    judge(read.records);
    records = read.records;
    secrets = storedRecordSecrets(read.records);
    revision = read.revision;
    options.loaded?.();
  }

  /** `stale`: judged again (a reload) while Redis does not answer: the set is the last one read, not Redis's. */
  function judge(read: Record<string, unknown>, stale = false): void {
    active = activeSubscriptions(where, read, logger, options);
    logger.info(
      stale
        ? `[webhook] loaded ${active.size} dynamic subscription(s) from the last set read from ${where} (Redis is unreachable; it is read again once it answers)`
        : `[webhook] loaded ${active.size} dynamic subscription(s) from ${where}`,
    );
  }

  async function poll(): Promise<void> {
    if (refreshing) return;
    refreshing = true;
    try {
      await refresh();
      if (failing) logger.info(`[webhook] dynamic subscriptions refreshed again from ${where}`);
      failing = false;
    } catch (err) {
      // Once per outage: its cause reads differently from one poll to the next (the connection closed,
      // refused, the retries given up), and a poll a second would otherwise log each change.
      if (!failing)
        logger.error(
          `[webhook] dynamic subscriptions not refreshed (${redisCommandFailure(err)}); serving the last good set of ${active.size} until Redis answers again`,
        );
      failing = true;
      // Read the hash again once Redis answers, whatever the counter says: a store that started over while
      // it could not be read (Redis restarted empty, the subscriptions made again) may have counted back up
      // to the same revision with other records, other secrets.
      revision = undefined;
    } finally {
      refreshing = false;
    }
  }

  return {
    current: () => active,
    lookup(name) {
      const found = active.get(name);
      return found === undefined ? undefined : subscriptionRoute(found);
    },
    names: () => [...active.keys()],
    storedSecrets: () => secrets,
    disabledNames: () =>
      Object.entries(records ?? {}).flatMap(([name, raw]) => {
        const parsed = parseSubscription(where, name, raw);
        return parsed.ok && !parsed.value.enabled ? [name] : [];
      }),
    reloaded() {
      if (records !== undefined) judge(records, failing);
    },
    async open() {
      await poll();
      timer = setInterval(() => void poll(), options.pollMs ?? 1000);
      timer.unref();
    },
    close() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}

import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { type Clock, systemClock } from "../../../clock.js";
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
import { credentialsRefusal, isRefusal, refusalHint } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { redisCommandFailure } from "./unreachable.js";

/**
 * Dynamic subscriptions with `state.backend: redis`: a hash `<prefix>:subscriptions` (route name → the
 * record as JSON, the shape of webhook_subscriptions.json) and a counter `<prefix>:subscriptions:revision`
 * that every write of svc increments, so a gateway knows with one GET whether svc changed anything. A hand
 * edit (redis-cli) moves no counter: see createRedisSubscriptionSource for how a gateway still sees it.
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

/** The hash as Redis holds it (route name → text) and the revision it is at. */
interface RawSnapshot {
  readonly revision: string;
  readonly hash: Record<string, string>;
}

/**
 * The hash and the revision it is at, read without a transaction: a full Redis (OOM) refuses every
 * command queued in MULTI, reads too, and a gateway started then would serve none of the subscriptions it
 * holds (404). The revision is read before and after the hash, in one round trip: every write increments
 * it in the transaction that changes the records, so the same revision on both sides is the records'.
 */
async function readRaw(redis: Redis, keys: RedisKeys, path: string): Promise<RawSnapshot> {
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
        hash: (hashReply?.[1] as Record<string, string> | null) ?? {},
      };
    }
  } catch (err) {
    throw explained(path, err);
  }
  throw new SvcError("store_conflict", `${path}: ${STALE_SUBSCRIPTION_STORE}`);
}

async function snapshot(redis: Redis, keys: RedisKeys, path: string): Promise<VersionedSnapshot<unknown>> {
  const read = await readRaw(redis, keys, path);
  return { revision: read.revision, records: decode(read.hash) };
}

/** A digest of the hash's fields and texts, whatever order Redis lists them in. */
function digestOf(hash: Record<string, string>): string {
  const digest = createHash("sha256");
  for (const name of Object.keys(hash).sort()) digest.update(`${JSON.stringify([name, hash[name]])}\n`);
  return digest.digest("hex");
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
  /** How often the revision counter and the hash's field count are read (one round trip); 1 s by default. */
  readonly pollMs?: number;
  /** How often the whole hash is read even though neither moved (a hand edit in place); 30 s by default. */
  readonly fullReadMs?: number;
  /** The timers the polls wait on (the gateway's clock; tests move a fake one). */
  readonly clock?: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** Each set read from Redis, once it is served. */
  readonly loaded?: () => void;
}

const POLL_MS = 1000;
/**
 * Bounds how long a hand edit that leaves the field count as it was (a record rewritten in place with
 * redis-cli) goes unseen, at one HGETALL per instance per period: with thousands of records a read a second
 * would move megabytes a second per instance, the count and the counter move a few bytes.
 */
const FULL_READ_MS = 30_000;

/**
 * What a gateway serves from the Redis store. Requests read the set in memory (no Redis round trip per
 * request). A background poll reads the revision counter and the hash's field count; when either moved it
 * reads the whole hash, and it does so every `fullReadMs` anyway, so an edit made by hand (redis-cli HSET,
 * HDEL), which moves no counter, is served too. A full read that finds the hash as it was changes nothing
 * and logs nothing. While Redis is unreachable the last good set is served and the log says so once.
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
  /** The field count and digest of the hash last read: what a hand edit changes. */
  let fields = 0;
  let digest = "";
  /** Polls since the hash was last read in full. */
  let polls = 0;
  /** Since the last refresh failed: the log says so at the outage's first failure and when it is over. */
  let failing = false;
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? POLL_MS;
  const fullReadEvery = Math.max(1, Math.round((options.fullReadMs ?? FULL_READ_MS) / pollMs));
  let timer: unknown;
  let closed = false;
  /**
   * A reconnect Redis turned away for the URL's credentials (its password changed, or one asked for that the
   * URL lacks): no reconnect gets through until state.redis_url is fixed, so the outage line names that,
   * once per outage, not a reconnect that comes by itself.
   */
  let credentials: string | undefined;
  let credentialsSaid = false;
  redis.on("error", (err: Error) => {
    if (/^(WRONGPASS|NOAUTH)\b/.test(err.message)) credentials = err.message;
  });
  redis.on("ready", () => {
    credentials = undefined;
  });
  /** Said once Redis turned the credentials away (the outage's first line may have come before). */
  const sayCredentials = (): boolean => {
    const refusal = credentials === undefined ? undefined : credentialsRefusal(label, credentials);
    if (refusal === undefined || credentialsSaid) return refusal !== undefined;
    credentialsSaid = true;
    logger.error(
      `[webhook] dynamic subscriptions not refreshed (Redis at ${label} ${refusal.said} on reconnecting (${credentials}) — ${refusal.fix}, then restart the gateway); serving the last good set of ${active.size} meanwhile`,
    );
    return true;
  };

  async function refresh(): Promise<void> {
    polls += 1;
    if (revision !== undefined && polls < fullReadEvery) {
      const replies = await redis
        .pipeline()
        .get(keys.subscriptionsRevision())
        .hlen(keys.subscriptions())
        .exec();
      const [current, count] = replies ?? [];
      const failed = [current, count].find((reply) => reply?.[0]);
      if (failed?.[0]) throw failed[0];
      if (((current?.[1] as string | null) ?? "") === revision && count?.[1] === fields) return;
    }
    const read = await readRaw(redis, keys, where);
    polls = 0;
    const readDigest = digestOf(read.hash);
    // Svc's own writes move the counter and are loaded as before; a full read that finds the hash as it
    // was read last (the common case) is no new set.
    const unchanged = read.revision === revision && readDigest === digest;
    revision = read.revision;
    fields = Object.keys(read.hash).length;
    digest = readDigest;
    if (unchanged) return;
    const decoded = decode(read.hash);
    judge(decoded);
    records = decoded;
    secrets = storedRecordSecrets(decoded);
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
    try {
      await refresh();
      if (failing) logger.info(`[webhook] dynamic subscriptions refreshed again from ${where}`);
      failing = false;
      credentialsSaid = false;
    } catch (err) {
      // Once per outage: its cause reads differently from one poll to the next (the connection closed,
      // refused, the retries given up), and a poll a second would otherwise log each change.
      if (!sayCredentials() && !failing)
        logger.error(
          `[webhook] dynamic subscriptions not refreshed (${redisCommandFailure(err)}); serving the last good set of ${active.size} until Redis answers again`,
        );
      failing = true;
      // Read the hash again once Redis answers, whatever the counter says: a store that started over while
      // it could not be read (Redis restarted empty, the subscriptions made again) may have counted back up
      // to the same revision with other records, other secrets.
      revision = undefined;
    }
  }

  /** The next poll is timed from the end of this one: polls never overlap, however slow Redis answers. */
  function schedule(): void {
    if (closed) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      void poll().then(schedule);
    }, pollMs);
    (timer as { unref?: () => void } | undefined)?.unref?.();
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
      schedule();
    },
    close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}

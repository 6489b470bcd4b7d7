import type { LoadedConfig } from "../../config/load.js";
import {
  commandOptions,
  connectRedis,
  evictionProblem,
  persistenceProblem,
  redisLabel,
} from "../../io/state/redis/connection.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../../io/state/redis/keys.js";
import {
  createRedisSubscriptionStore,
  type RedisSubscriptionStore,
} from "../../io/state/redis/subscriptions.js";
import { subscriptionStore } from "../../io/stores/subscriptions.js";
import { notingOverEmptied } from "../overEmptiedStore.js";

/** How long a closed connection of a CLI command waits for Redis to close its side before it is cut. */
const CLOSE_WAIT_MS = 100;

/** The subscription store a CLI command works on; `close()` when done (Redis: disconnects). */
export interface CliSubscriptionStore extends RedisSubscriptionStore {
  /** What the Redis behind the store puts at risk by evicting keys (as the gateway's start warns); none for the file. */
  evictionProblem(): Promise<string | undefined>;
  /** What the Redis behind the store loses at its own restart, keeping nothing (as the gateway's start warns); none for the file. */
  persistenceProblem(): Promise<string | undefined>;
  close(): void;
}

/**
 * `state.backend: redis`: the hash every gateway instance serves (an unreachable Redis fails with the
 * state.redis_url message); `local`: webhook_subscriptions.json in SVC_HOME.
 */
export async function openSubscriptionStore(loaded: LoadedConfig): Promise<CliSubscriptionStore> {
  const state = loaded.config.state;
  if (state.backend === "redis") {
    const url = state.redis_url ?? "";
    const prefix = state.redis_key_prefix ?? DEFAULT_KEY_PREFIX;
    const redis = await connectRedis(
      url,
      loaded.paths.config,
      // One short command: no reconnecting in the background once it is done. Its socket is let go at
      // once when closed: a Redis that does not answer (frozen) would hold it the 2 s ioredis gives a close
      // by default, past the 2 s its command already waited.
      { ...commandOptions(), retryStrategy: () => null, disconnectTimeout: CLOSE_WAIT_MS },
      prefix,
      // A Redis still loading its data answers once loaded: the command waits for it, and says so.
      { say: (line) => process.stderr.write(`Note: ${line}\n`) },
    );
    redis.on("error", () => {});
    const keys = redisKeys(prefix);
    return {
      ...createRedisSubscriptionStore(redis, keys, redisLabel(url)),
      evictionProblem: () => evictionProblem(redis, redisLabel(url)),
      persistenceProblem: () => persistenceProblem(redis, redisLabel(url)),
      close: () => redis.disconnect(),
    };
  }
  const file = notingOverEmptied(subscriptionStore(loaded.paths.subscriptions), "subscriptions");
  return {
    path: file.path,
    read: () => Promise.resolve(file.read()),
    update: (change, expectedRevision) => file.update(change, expectedRevision),
    evictionProblem: () => Promise.resolve(undefined),
    persistenceProblem: () => Promise.resolve(undefined),
    close: () => {},
  };
}

/** Runs `work` on the command's subscription store and closes it, whatever the outcome. */
export async function withSubscriptionStore<T>(
  loaded: LoadedConfig,
  work: (store: CliSubscriptionStore) => Promise<T>,
): Promise<T> {
  const store = await openSubscriptionStore(loaded);
  try {
    return await work(store);
  } finally {
    store.close();
  }
}

import type { RouteSource } from "../actors/routes.js";
import type { Clock } from "../clock.js";
import type { StateSettings } from "../config/sections/state.js";
import type { Route } from "../config/sections/webhook.js";
import type { Logger } from "../io/log.js";
import { commandOptions, connectRedis, redisLabel } from "../io/state/redis/connection.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../io/state/redis/keys.js";
import { createRedisSubscriptionSource } from "../io/state/redis/subscriptions.js";
import { createSubscriptionSource } from "../io/stores/subscriptions.js";
import { enabledSubscriptions } from "./webhookStartupWarnings.js";

/** No secrets: one array, so a list made with it stays the same. */
const NONE: readonly string[] = Object.freeze([]);

/** Where the gateway's dynamic routes come from, and how to start and stop following them. */
export interface DynamicRoutes {
  readonly source: RouteSource;
  /** Where they are kept, as the log names it: the file, or the Redis server. */
  readonly where: string;
  /** The enabled subscriptions in the store (after `open()`), served or not. */
  enabledNames(): readonly string[];
  /** The disabled subscriptions in the store (after `open()`). */
  disabledNames(): readonly string[];
  /**
   * Redis (after `open()`): the names of every record the shared hash holds, invalid ones too, and the hash
   * as messages name it; undefined for the file.
   */
  storedNames(): Promise<{ readonly names: readonly string[]; readonly where: string } | undefined>;
  /** Loads the first set (Redis: connects; a bad `state.redis_url` refuses the start). */
  open(): Promise<void>;
  /** After a reload of config.yaml: the records are judged again by it at the next read (see SubscriptionSource). */
  reloaded(): void;
  close(): void;
}

export interface DynamicRoutesOptions {
  readonly state: StateSettings;
  readonly subscriptionsFile: string;
  readonly configFile: string;
  readonly logger: Logger;
  readonly loopback: boolean;
  readonly hasGlobalSecret: () => boolean;
  /** What a subscription's keys leave without effect, logged on each load (see SubscriptionSourceOptions). */
  readonly routeWarnings?: (route: Route, name: string) => readonly string[];
  /** Its script, cron job and `in_file` lists that are not there, logged after each load (see SubscriptionSourceOptions). */
  readonly referenceWarnings?: (route: Route, name: string, where: string) => Promise<readonly string[]>;
  /** Redis: how often the revision counter is read (tests shorten it). */
  readonly pollMs?: number;
  /** Redis: the timers the polls wait on (the gateway's clock). */
  readonly clock?: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** Redis: each set of subscriptions read, once it is served. */
  readonly loaded?: () => void;
  /** Redis: the gateway's stop during its start, which ends the wait for a Redis still loading its data. */
  readonly signal?: AbortSignal;
}

/**
 * `local`: webhook_subscriptions.json, read again when it changes. `redis`: the subscriptions every
 * instance shares (docs/durability.md), followed in the background on a connection of their own.
 */
export function dynamicRoutesFor(options: DynamicRoutesOptions): DynamicRoutes {
  const { state, logger, loopback, hasGlobalSecret, routeWarnings, referenceWarnings } = options;
  if (state.backend !== "redis") {
    const source = createSubscriptionSource(options.subscriptionsFile, logger, {
      loopback,
      hasGlobalSecret,
      ...(routeWarnings === undefined ? {} : { routeWarnings }),
      ...(referenceWarnings === undefined ? {} : { referenceWarnings }),
    });
    return {
      source,
      where: options.subscriptionsFile,
      enabledNames: () => enabledSubscriptions(options.subscriptionsFile),
      disabledNames: () => enabledSubscriptions(options.subscriptionsFile, false),
      storedNames: () => Promise.resolve(undefined),
      open: () => Promise.resolve(),
      reloaded: () => source.reloaded(),
      close: () => {},
    };
  }
  const url = state.redis_url ?? "";
  const prefix = state.redis_key_prefix ?? DEFAULT_KEY_PREFIX;
  const keys = redisKeys(prefix);
  let opened:
    | { close(): void; reloaded(): void; disabledNames(): readonly string[]; names(): Promise<string[]> }
    | undefined;
  // Requests before open() (none: the listener starts after it) would find no dynamic route.
  let source: RouteSource = { lookup: () => undefined, current: () => new Map(), storedSecrets: () => NONE };
  return {
    source: {
      lookup: (name) => source.lookup(name),
      current: () => source.current(),
      // The same array while the secrets are unchanged (`hiddenValues` gives the same list meanwhile).
      storedSecrets: () => source.storedSecrets?.() ?? NONE,
    },
    where: redisLabel(url),
    enabledNames: () => [...source.current().keys()],
    disabledNames: () => opened?.disabledNames() ?? [],
    reloaded: () => opened?.reloaded(),
    async storedNames() {
      if (opened === undefined) return undefined;
      return { names: await opened.names(), where: `${keys.subscriptions()} in Redis at ${redisLabel(url)}` };
    },
    async open() {
      const redis = await connectRedis(url, options.configFile, commandOptions(), prefix, {
        say: (line) => logger.warn(`[state] ${line}`),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      // A failed refresh is logged by the source; the connection's own errors only say it is down.
      redis.on("error", () => {});
      const followed = createRedisSubscriptionSource(redis, keys, redisLabel(url), logger, {
        loopback,
        hasGlobalSecret,
        ...(routeWarnings === undefined ? {} : { routeWarnings }),
        ...(referenceWarnings === undefined ? {} : { referenceWarnings }),
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.loaded === undefined ? {} : { loaded: options.loaded }),
      });
      await followed.open();
      source = followed;
      opened = {
        close() {
          followed.close();
          redis.disconnect();
        },
        reloaded: () => followed.reloaded(),
        disabledNames: () => followed.disabledNames(),
        names: () => redis.hkeys(keys.subscriptions()),
      };
    },
    close() {
      opened?.close();
      opened = undefined;
    },
  };
}

import type { InspectionEvent } from "xstate";
import type { TimerClock } from "../actors/coalescer.js";
import type { RouteSource } from "../actors/routes.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import type { StallSettings } from "../io/state/redis/sharedQueue.js";
import type { StateStore } from "../state/store.js";
import type { EventModes } from "../streams/context.js";

export interface GatewayOptions {
  /** SVC_HOME; defaults to the environment's. */
  readonly home?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides of `platforms.webhook.host` / `port` (`--host`, `--port`; 0 picks a free port). */
  readonly host?: string;
  readonly port?: number;
  /**
   * The gateway's clock: rate windows, idempotency, signature timestamps, coalescing windows, cron ticks,
   * delivery retries and the stop's drain bound (default the system clock).
   */
  readonly clock?: Clock;
  /** Overrides `clock.now`, the system clock (signature timestamps, times recorded and saved for a restart). */
  readonly now?: () => number;
  /** Overrides `clock.elapsed`: durations measured (request and run times), rate-limit windows and the idempotency hour. */
  readonly elapsed?: () => number;
  /**
   * Overrides `clock`'s timers for the coalescing groups (`--inspect` actor groups use the system's) and the
   * delivery history's summaries of refused requests not recorded one by one only.
   */
  readonly timers?: TimerClock;
  readonly logger?: Logger;
  readonly eventModes?: EventModes;
  /** Dynamic subscriptions; static routes of the same name win. */
  readonly dynamicRoutes?: RouteSource;
  readonly inspect?: (event: InspectionEvent) => void;
  /** The port the `--inspect` relay holds: a webhook port on it is named as taken by the inspector. */
  readonly inspectPort?: number;
  /** Force the HTTP implementation (default: uWS, node:http when uWS cannot load). */
  readonly http?: "uws" | "node";
  /** How long `stop()` waits for agent runs in flight (default `gateway.drain_timeout_seconds`, 30 s). */
  readonly drainTimeoutMs?: number;
  /** Agent runs kept waiting at most before new agent events are answered 503 (default `RUN_QUEUE_CAP`). */
  readonly runQueueCap?: number;
  /**
   * Agent runs whose delivery may wait to retry outside a run slot at most; past it such a run keeps its
   * slot (default `RETRYING_DELIVERY_CAP`, 1000).
   */
  readonly retryingDeliveryCap?: number;
  /** Coalescing groups kept pending at most before a new key is dispatched at once (default `COALESCE_GROUP_CAP`). */
  readonly coalesceGroupCap?: number;
  /** Delivery ids the idempotency cache keeps at most, the oldest going first (default `SEEN_CACHE_MAX_ENTRIES`). */
  readonly seenIdsCap?: number;
  /** Overrides `state.backend` (tests and benchmarks pass `memoryStateStore()`). */
  readonly stateStore?: StateStore;
  /** `state.backend: redis`: how soon another instance takes over a dead instance's run (tests shorten it). */
  readonly redisStall?: StallSettings;
  /** `state.backend: redis`: how often the subscriptions' revision counter is read (1 s; tests shorten it). */
  readonly subscriptionPollMs?: number;
  /**
   * Called once config.yaml (and `.env`) have been read for the start: a reload asked for after it (a
   * SIGHUP while the gateway still starts) is owed once the start is done.
   */
  readonly onConfigRead?: () => void;
  /**
   * Aborted by a stop signal that comes while the gateway starts: a wait for Redis (one still loading its
   * data) ends at once (the start rejects), and so does the start before its listener opens
   * (`StoppedWhileStarting`); later, no saved run is queued, the cron schedule is not started and the
   * shared queue's worker takes no job (the stop follows).
   */
  readonly stopping?: AbortSignal;
  /**
   * Called once another gateway takes the state directory over (`StateDirTakenOver`, `state.backend: local`),
   * also while this one still starts: that gateway runs this home from then on.
   */
  readonly onTakenOver?: () => void;
}

export interface Gateway {
  readonly host: string;
  /** The real listening port; 0 when the webhook adapter is disabled. */
  readonly port: number;
  /**
   * A random id made at its start, which each of its `/health` 200s names in its `Svc-Instance` header:
   * `svc gateway run` records it in gateway.json, so the commands that ask `/health` at the address
   * recorded there tell this gateway's answer from another listener's.
   */
  readonly instance: string;
  /** `state.backend` as started (a change takes effect at a restart): where a run cut off by the stop goes. */
  readonly stateBackend: "local" | "redis";
  /** `platforms.webhook.delivery_history` as started (a change takes effect at a restart). */
  readonly deliveryHistory: boolean;
  /** The drain its stop waits for runs in flight, in seconds: the start's, then each applied reload's. */
  readonly drainTimeoutSeconds: () => number;
  readonly routes: () => string[];
  /** What `/metrics` serves (undefined when the gateway serves none), readable after the stop closed it too. */
  readonly metrics: GatewayMetrics | undefined;
  /** Re-reads config.yaml and swaps routes, limits and the agent runner; host and port need a restart. */
  reload(): { routes: string[] };
  /** Stops accepting, answers requests in flight, waits for runs (bounded), then stops every actor. */
  stop(): Promise<void>;
}

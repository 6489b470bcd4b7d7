import { randomUUID } from "node:crypto";
import type { Coalescer } from "../actors/coalescer.js";
import type { CronScheduler } from "../actors/cron.js";
import type { RouteRegistry } from "../actors/routes.js";
import type { GatewaySystem } from "../actors/system.js";
import { type Clock, systemClock } from "../clock.js";
import type { WrittenAs } from "../config/describe.js";
import type { Config } from "../config/schema.js";
import { SvcError } from "../errors.js";
import { HEAP_RECOVERED_SHARE, type HeapWatch, heapShare, watchHeap } from "../io/heapWatch.js";
import { createRequestHandler, type RequestHandler } from "../io/http/core.js";
import { withShownHost } from "../io/http/listenHint.js";
import { listenFailure } from "../io/http/listenProbe.js";
import { type ServerHandle, startHttpServer } from "../io/http/server.js";
import type { Logger } from "../io/log.js";
import type { ProcessGroups } from "../io/processGroups.js";
import { runScript } from "../io/scripts.js";
import type { AcceptedEvent, Coalesced, EventModes } from "../streams/context.js";
import type { IdempotencyStore } from "../streams/idempotencyRecord.js";
import { createPipeline } from "../streams/pipeline.js";
import { createFixedWindowLimiter } from "../streams/rateLimiter.js";
import type { SeenCache } from "../streams/seenCache.js";
import { verifySignature } from "../streams/signatures.js";
import type { HeldGroups } from "../streams/stages/dispatch.js";
import type { RateLimitDeps } from "../streams/stages/rateLimit.js";
import type { MaybePromise } from "../streams/stateUnavailable.js";
import type { PipelineLogHooks } from "./logHooks.js";
import type { ProfileResources } from "./profileResources.js";

export interface IngressDeps {
  readonly config: Config;
  readonly host: string;
  readonly port: number;
  /** The port's key as written (`platforms.webhook.extra.port` under `extra`), named when it cannot be taken. */
  readonly portKey?: string;
  /** The host's key as written (`platforms.webhook.extra.host` under `extra`), named when it cannot be bound. */
  readonly hostKey?: string;
  /** The file's text for a host a `${VAR}` gave, named instead of the host when it cannot be bound. */
  readonly hostGiven?: WrittenAs | undefined;
  /** The `--inspect` relay's port, named when the listener cannot take the same one. */
  readonly inspectPort?: number;
  /** SVC_HOME: its `gateway.json` tells whether its own gateway holds a port the listener cannot take. */
  readonly home?: string;
  readonly http: "uws" | "node";
  /** The gateway's instance id, which its `/health` 200 names (`Svc-Instance`) on every ingress thread. */
  readonly instance?: string;
  readonly logger: Logger;
  readonly hooks: PipelineLogHooks;
  readonly now: () => number;
  /** A clock that is never set (`Clock.elapsed`): what the rate-limit windows last their minute on. */
  readonly elapsed: () => number;
  /** Timers of the listener (a sender answered before its body ended lingers on them). */
  readonly clock: Clock;
  readonly system: GatewaySystem;
  readonly registry: RouteRegistry;
  readonly profiles: ProfileResources;
  /** Where each route script's process group is noted while it runs (the gateway's `$SVC_HOME/state/agents`). */
  readonly groups?: ProcessGroups;
  readonly seen: SeenCache;
  readonly coalescer: Coalescer;
  /** The saved groups the start held (their route gone), released by their route's first event. */
  readonly heldGroups?: HeldGroups;
  readonly cron: CronScheduler;
  readonly deliverDirect: (event: AcceptedEvent) => Promise<boolean>;
  readonly eventModes?: EventModes;
  /** Wraps the event modes (the state journal records cron fires). */
  readonly modes?: (modes: EventModes) => EventModes;
  /** Accepted answers wait for this (the state journal's sync); absent for in-memory state. */
  readonly durable?: (() => Promise<void> | undefined) | undefined;
  /** Called once answers that promise something kept have been written (the delivery history writes their lines). */
  readonly answeredKept?: (() => void) | undefined;
  /** Wraps the request handler (metrics, access log, delivery history). */
  readonly observe?: (handler: RequestHandler) => RequestHandler;
  /** `state.backend: redis`: rate windows, idempotency records and coalescing groups shared by every instance. */
  readonly shared?: SharedIngressState | undefined;
  readonly enqueueRun: (event: AcceptedEvent) => MaybePromise<boolean>;
}

export interface SharedIngressState {
  readonly limiter: Pick<RateLimitDeps, "isSpent" | "tryAcquire"> & {
    msUntilReset(route: string): number;
    setLimit(limit: number): void;
  };
  checkAndAdd(key: string): Promise<boolean>;
  /** The event `key` stands for is stored: its id lasts the hour (it was recorded as pending). */
  keep(key: string): Promise<void>;
  forget(key: string): void;
  coalesce(event: AcceptedEvent): Promise<Coalesced>;
  /** Direct deliveries under way, told to the other instances: their duplicates wait for the outcome. */
  readonly directDeliveries?: Pick<IdempotencyStore, "begin" | "delivered" | "stopped" | "elsewhere">;
}

export interface Ingress {
  readonly host: string;
  /** The real listening port; 0 when the webhook adapter is disabled. */
  readonly port: number;
  /** Closes the listener at once and starts answering the requests still in the pipeline. */
  closeIntake(): void;
  /** Resolves once every request taken in has been answered (after `closeIntake`). */
  drained(): Promise<void>;
  /**
   * The stop's end: the open connections close (until then a request on one is answered 503), and
   * ingress threads end.
   */
  closeConnections(): Promise<void>;
  /** Applies a reload's rate limit (open windows keep their count). */
  reload(config: Config): void;
}

/**
 * The webhook adapter: the rate limiter, the stage pipeline and the HTTP listener. With the adapter off
 * no listener opens; the pipeline exists all the same (nothing reaches it).
 */
export async function startIngress(deps: IngressDeps): Promise<Ingress> {
  const { registry, hooks, seen, profiles, host } = deps;
  const webhook = deps.config.platforms.webhook;
  const shared = deps.shared;
  const limiter =
    shared?.limiter ??
    createFixedWindowLimiter({ limit: webhook.rate_limit, windowMs: 60_000, now: deps.elapsed });
  const forget = shared === undefined ? (key: string) => seen.delete(key) : shared.forget;
  const pipeline = createPipeline({
    routes: {
      lookup: (name) => registry.lookup(name),
      multiplexProfiles: () => registry.current().multiplexProfiles,
    },
    maxBodyBytes: () => registry.current().maxBodyBytes,
    isSpent: (route) => limiter.isSpent(route),
    tryAcquire: (route) => limiter.tryAcquire(route),
    msUntilReset: (route) => limiter.msUntilReset(route),
    auth: { verify: verifySignature, ...hooks.auth },
    onPing: hooks.onPing,
    filters: { listReader: profiles.listReader },
    script: {
      runScript: (request) =>
        runScript({
          scriptsDir: profiles.paths(request.profile).scripts,
          script: request.script,
          payload: request.payload,
          timeoutMs: registry.current().scriptTimeoutMs,
          route: request.routeName,
          event: request.event,
          deliveryId: request.deliveryId,
          ...(deps.groups === undefined ? {} : { groups: deps.groups }),
        }),
      onIgnored: hooks.onScriptIgnored,
    },
    idempotency: {
      checkAndAdd: shared === undefined ? (key) => seen.checkAndAdd(key) : shared.checkAndAdd,
      randomId: randomUUID,
      onWaitsForOriginal: hooks.onDuplicateWaits,
      ...(shared?.directDeliveries === undefined ? {} : { shared: shared.directDeliveries }),
    },
    dispatch: {
      modes: (deps.modes ?? ((modes) => modes))({
        coalesce: shared === undefined ? (event) => deps.coalescer.offer(event) : shared.coalesce,
        ...(shared === undefined
          ? {
              coalesceRetired: (event) => deps.coalescer.offerRetired(event),
              retiredQueued: (event) => deps.coalescer.retiredQueued(event),
            }
          : {}),
        fireCronJob: (jobRef, event) => deps.cron.fire(jobRef, event),
        ...deps.eventModes,
      }),
      enqueueRun: deps.enqueueRun,
      forget,
      // A shared store (Redis) stores a group's event before its answer: no group holds one answered 503.
      ...(shared === undefined
        ? {
            withdraw: (event) => deps.coalescer.withdraw(event),
            kept: (event) => deps.coalescer.kept(event),
            reloadFlushesGroups: true,
            ...(deps.heldGroups === undefined ? {} : { heldGroups: deps.heldGroups }),
          }
        : { keep: shared.keep }),
      onCronUnavailable: hooks.onCronUnavailable,
      onCoalesceUnavailable: hooks.onCoalesceUnavailable,
    },
    deliver: {
      deliverDirect: deps.deliverDirect,
      forget,
    },
    onFailure: hooks.onStageFailure,
    ...(deps.durable === undefined ? {} : { durable: deps.durable }),
    ...(deps.answeredKept === undefined ? {} : { answeredKept: deps.answeredKept }),
    // Redis: the kept answers its replies released have their lines written once those reactions have run.
    ...(shared === undefined ? {} : { afterReactions: (write: () => void) => process.nextTick(write) }),
  });

  let closing: Promise<void> | undefined;
  let server: ServerHandle = { impl: "node", host, port: 0, close() {} };
  let heap: HeapWatch | undefined;
  if (webhook.enabled) {
    // On the process's own timers, not the gateway's clock: the heap fills in real time, and a test's fake
    // clock counts only the timers of the rules it moves.
    heap = watchHeap({
      timers: systemClock,
      onShort: (reading) =>
        deps.logger.warn(
          `[webhook] short of memory: the JavaScript heap holds ${heapShare(reading)}; new webhook requests are answered 503 (Retry-After: 30) until it is at ${HEAP_RECOVERED_SHARE * 100}% or less — give the gateway a larger heap (NODE_OPTIONS=--max-old-space-size=<MB>) or send it fewer or smaller events at once`,
        ),
      onRecovered: (reading, refused) =>
        deps.logger.info(
          `[webhook] memory available again: the JavaScript heap holds ${heapShare(reading)}; webhook requests are taken again (${refused} answered 503 meanwhile)`,
        ),
    });
    const watched = heap;
    try {
      server = await startHttpServer({
        host,
        port: deps.port,
        clock: deps.clock,
        logger: deps.logger,
        impl: deps.http,
        threads: webhook.workers,
        bodyLimit: registry.current().maxBodyBytes,
        ...(deps.instance === undefined ? {} : { instance: deps.instance }),
        handler: (deps.observe ?? ((handler) => handler))(
          createRequestHandler({
            pipeline,
            multiplexProfiles: () => registry.current().multiplexProfiles,
            maxBodyBytes: () => registry.current().maxBodyBytes,
            now: deps.now,
            elapsed: deps.elapsed,
            onInternalError: (err) => hooks.onStageFailure("ingress", err, undefined),
            stopping: () => closing !== undefined,
            shortOfMemory: () => watched.refuse(),
            ...(deps.instance === undefined ? {} : { instance: deps.instance }),
          }),
        ),
      });
    } catch (err) {
      heap.stop();
      // Why, for the hint: a port below 1024 this user may not take is no busy port, and a busy one is
      // said by what holds it (this SVC_HOME's gateway, another svc gateway, another program).
      const hint = await listenFailure(host, deps.port, {
        inspectPort: deps.inspectPort,
        home: deps.home,
        portKey: deps.portKey,
        hostKey: deps.hostKey,
        given: deps.hostGiven,
      });
      const failure = withShownHost((err as Error).message, host, deps.port, deps.hostGiven);
      throw new SvcError("startup_refused", `${failure} — ${hint}`);
    }
  }
  return {
    host,
    port: server.port,
    closeIntake() {
      heap?.stop();
      server.close();
      closing ??= pipeline.close();
    },
    drained: () => closing ?? Promise.resolve(),
    closeConnections: async () => {
      await server.ended?.();
    },
    reload(config) {
      limiter.setLimit(config.platforms.webhook.rate_limit);
      // The routes were reloaded first: their table holds the new limit.
      server.setBodyLimit?.(registry.current().maxBodyBytes);
    },
  };
}

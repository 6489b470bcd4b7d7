import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { coalesceNote } from "../actors/coalescer.js";
import { pendingRunOf } from "../actors/pendingRuns.js";
import type { KeptReply, QueuedRun, RunSlot } from "../actors/runs.js";
import type { Clock } from "../clock.js";
import type { StateSettings } from "../config/sections/state.js";
import { describeError, LoggedError, RunFailedAtStop, RunKeptForRestart } from "../errors.js";
import type { Logger } from "../io/log.js";
import type { ToldMirror } from "../io/sessions/mirror.js";
import { shellWord } from "../io/shellWord.js";
import { type Carried, type CarriedId, carryIds } from "../io/state/redis/carriedIds.js";
import { createSharedCoalescing, type SharedCoalescing } from "../io/state/redis/coalescing.js";
import { connectFailure } from "../io/state/redis/connectFailure.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
  evictionProblem,
  idlePingMs,
  persistenceProblem,
  redisLabel,
  refusalHint,
} from "../io/state/redis/connection.js";
import { type CronLease, createCronLease } from "../io/state/redis/cronLease.js";
import { serverGreeting } from "../io/state/redis/greeting.js";
import {
  createSharedIdempotency,
  PENDING_TTL_SECONDS,
  SEEN_TTL_SECONDS,
  type SharedIdempotency,
} from "../io/state/redis/idempotency.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../io/state/redis/keys.js";
import { createSharedRateLimiter, type SharedRateLimiter } from "../io/state/redis/rateLimit.js";
import { watchServerSeen } from "../io/state/redis/serverSeen.js";
import { type SharedSessionMirrors, sharedSessionMirrors } from "../io/state/redis/sessionMirrors.js";
import {
  createSharedQueue,
  jobIdOf,
  LOCK_MS,
  RUN_LATER_MS,
  RunAfterStop,
  RunLater,
  type StallSettings,
} from "../io/state/redis/sharedQueue.js";
import { type SharedRun, storedRoute } from "../io/state/redis/sharedRun.js";
import { RUNS_QUEUE } from "../io/state/redis/unendedRun.js";
import type { PendingRun } from "../io/stores/pendingRuns.js";
import type { AcceptedEvent, Coalesced, ResolvedRoute } from "../streams/context.js";
import { seenKey } from "../streams/stages/idempotency.js";
import { goneJobLine, JOB_GONE } from "./goneJob.js";
import { runWaitsForRouteLine, unservedRouteReason } from "./unservedRoute.js";

/**
 * Everything a 202 promises, kept in Redis and shared by every gateway process that names the same
 * `state.redis_url` (`state.backend: redis`): idempotency records, rate-limit windows, the run queue
 * (BullMQ), coalescing groups and cron leases.
 */
export interface RedisState {
  readonly limiter: SharedRateLimiter;
  readonly seen: SharedIdempotency;
  /** Resolves true once the run is stored in the shared queue; rejects (503) while Redis is unreachable. */
  enqueueRun(event: AcceptedEvent): Promise<boolean>;
  /**
   * A run dropped at its turn whose event may be sent again (a fired job whose store could not be read),
   * called while its job runs: once Redis records the job finished, the job and its delivery ID's record
   * are removed together, so the sender's retry, on any instance, stores and runs it as a new event.
   */
  forgetRun(run: { readonly routeName: string; readonly deliveryId: string }): void;
  /** The `coalesce` event mode, on groups shared by every instance. */
  coalesce(event: AcceptedEvent): Promise<Coalesced>;
  readonly cronLease: CronLease;
  /**
   * Copies the delivery ids this home's local backend remembers into Redis (a start after a switch from
   * `local`, before the listener opens), each for what is left of its hour: a sender's retry of an event
   * accepted there is a duplicate here too. A record already in Redis is left as it is. Never rejects.
   */
  carryOver(ids: readonly CarriedId[]): Promise<Carried>;
  /**
   * Tells the other instances the session mirror of a delivery made here (with `mirrorTold`): each writes
   * it into its own session of that chat, if it has one. Receives theirs once told to (`receive(true)`:
   * while a route of this instance mirrors).
   */
  readonly sessionMirrors?: SharedSessionMirrors | undefined;
  /**
   * False during an outage (logged once, answered 503 until Redis is back) and while Redis refuses the
   * request path's writes (full, read-only: until one is taken again): `svc_state_available`.
   */
  available(): boolean;
  /**
   * `svc_runs_waiting` / `svc_runs_active` / `svc_deliveries_retrying`: the runs waiting in the shared queue
   * (for every instance), those this instance runs in its slots, and those whose delivery waits to retry
   * outside them. One read at a time; while Redis does not answer, the last count read.
   */
  runDepth(): Promise<{ waiting: number; active: number; retrying: number }>;
  /**
   * `--inspect`: tells `told` the counts `runDepth` gives, read again each time this instance stores, starts,
   * finishes or releases a run, and every `everyMs` on `timers` (runs stored or taken by other instances),
   * until `disconnect`. One read at a time (a change during one is read after it); while Redis is out, the
   * last count of waiting runs read, without asking it.
   */
  watchRunDepth(
    told: (depth: { waiting: number; active: number; retrying: number }) => void,
    everyMs: number,
    timers: Pick<Clock, "setTimeout" | "clearTimeout">,
  ): void;
  /** Starts this instance's workers (after the listener is up). */
  start(): void;
  /**
   * Stops the workers (running jobs get `drainMs`, then are left for another instance). The commands
   * connection stays for the rest of the stop: a scheduled cron run that ends in its drain gives back the
   * due time it held ahead, which would otherwise keep every instance from running it.
   */
  stop(drainMs: number): Promise<void>;
  /**
   * Closes the commands connection (after `stop`, once nothing of the stop needs Redis): what was sent on
   * it is answered first, waiting at most 2 s for a Redis that does not answer.
   */
  disconnect(): Promise<void>;
}

export interface RedisStateOptions {
  readonly settings: StateSettings;
  /** config.yaml, named in a startup error. */
  readonly configFile: string;
  /** False for a worker (the webhook adapter off): its outage line speaks of runs, not of requests. */
  readonly takesRequests?: boolean;
  readonly logger: Logger;
  /** The gateway's stop during its start: ends the wait for a Redis still loading its data. */
  readonly signal?: AbortSignal;
  /** `agent.max_concurrent_runs`: runs this instance works on at once. */
  readonly maxConcurrentRuns: number;
  /** `platforms.webhook.rate_limit` per minute. */
  readonly rateLimit: number;
  /**
   * The gateway's clock that is never set: what this instance remembers of a shared rate-limit window
   * (seen spent, the time left for `Retry-After`) follows it, so a system clock set back does not keep a
   * route answered 429 past its window.
   */
  readonly elapsed: () => number;
  /** The route a stored run names (by name: a route's configuration may hold its secret). */
  lookup(routeName: string): ResolvedRoute | undefined;
  /** Whether a route name is a disabled subscription (not served, not gone): named so in the log. */
  disabled?(routeName: string): boolean;
  /**
   * Runs one run (agent or fired cron job); rejects when it failed. `slot`: the shared queue's worker slot
   * it holds, handed back while its delivery waits to retry (with the reply, kept in Redis).
   */
  execute(run: QueuedRun, signal: AbortSignal, slot: RunSlot): Promise<unknown>;
  /** Runs whose delivery may wait to retry outside the worker's slots at once (default 1000). */
  readonly retryingCap?: number;
  /** Told the first time a run keeps its slot because `retryingCap` deliveries already wait to retry. */
  onRetryingCap?(cap: number): void;
  /** Stall takeover timings (tests shorten them; BullMQ's defaults otherwise). */
  readonly stall?: StallSettings;
  /**
   * A run the shared queue gave up on (its instance lost while running it, past the takeover limit), on the
   * one instance that gave it up, once its ERROR line is logged: recorded failed with `err`, as a run is
   * that failed here.
   */
  givenUp?(run: PendingRun, err: Error): void;
  /**
   * Writes the session mirror of a delivery another instance made into this instance's session of that
   * chat, if it has one (never rejects). Given, the instance tells the others its mirrors, and subscribes to
   * theirs at `sessionMirrors.receive(true)`.
   */
  mirrorTold?(mirror: ToldMirror): Promise<void>;
}

const RATE_WINDOW_MS = 60_000;
/** A finish Redis refused (full, read-only, a failing snapshot, an ACL), by the code its answer starts with. */
const REFUSED = /^(OOM|READONLY|MISCONF|NOPERM)\b/;
/** How long a scrape of `/metrics` waits for Redis to count the waiting runs. */
const DEPTH_READ_TIMEOUT_MS = 1000;
/**
 * A run keyed by a delivery id whose hour is over is a new event (the id is no longer a duplicate, as
 * with one process): a finished job left under that id is replaced, not taken for the new run.
 */
const RUN_ENQUEUE = { renewAfterMs: SEEN_TTL_SECONDS * 1000 } as const;
/**
 * How long after its record an enqueue may count on what the record cleared (the record's pending time:
 * past it, the id is no longer held and another add under it may have come between), and how many such
 * keys are remembered at most.
 */
const CLEARED_FOR_MS = PENDING_TTL_SECONDS * 1000;
const CLEARED_MAX = 10_000;

/** Connects (a bad `state.redis_url` refuses the start) and builds the shared pieces. */
/** How long a split message's next part waits at most for the write that stores where it stands. */
const KEEP_RETRY_WAIT_MS = 200;

export async function openRedisState(options: RedisStateOptions): Promise<RedisState> {
  const url = options.settings.redis_url ?? "";
  const { logger } = options;
  const label = redisLabel(url);
  const prefix = options.settings.redis_key_prefix ?? DEFAULT_KEY_PREFIX;
  const redis: Redis = await connectRedis(url, options.configFile, commandOptions(), prefix, {
    say: (line) => logger.warn(`[state] ${line}`),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  // A server that speaks TLS says nothing before the handshake: its reasons come through ioredis's errors.
  const greeting = /^rediss:/i.test(url) ? undefined : () => serverGreeting(redis.options);
  const keys = redisKeys(prefix);
  // Its own key (one per process), written only while Redis refuses writes: see `keepAlive`.
  const health = createRedisHealth(
    label,
    logger,
    undefined,
    greeting,
    keys.writeProbe(randomUUID()),
    options.takesRequests === false ? "runs" : "requests",
    greeting === undefined ? (reason) => connectFailure(url, label, redis.options, reason) : undefined,
  );
  health.watch("commands", redis);
  await health.keepAlive(() => idlePingMs(redis));
  const stall = options.stall === undefined ? {} : { stall: options.stall };
  /** Runs put off for want of their route (`RunLater`), each said once by this instance. */
  const waitingForRoute = new Set<string>();
  /** The keys of the runs this instance runs now that were dropped at their turn to be forgotten (`forgetRun`). */
  const forgotten = new Set<string>();
  /** `watchRunDepth`'s read, once it watches: told when the shared queue's counts change here. */
  let depthChanged: (() => void) | undefined;
  let stopWatching: (() => void) | undefined;

  const runs = createSharedQueue<SharedRun>({
    url,
    name: RUNS_QUEUE,
    noun: "agent run(s)",
    keys,
    health,
    logger,
    concurrency: options.maxConcurrentRuns,
    ...stall,
    changed: () => depthChanged?.(),
    givenUp(shared, reason, losses) {
      // Its run ended outside its slot (and was recorded there): only the job's finish was lost with its instance.
      if (shared.done === true) return;
      const {
        route: _route,
        reply: _reply,
        retry: _retry,
        done: _done,
        handedOnDue: _handedOnDue,
        ...run
      } = shared;
      const lost = losses === 1 ? "once" : `${losses} times`;
      logger.error(
        { route: run.routeName, delivery_id: run.deliveryId, err: reason },
        `[webhook] ${run.routeName}: run of delivery ${run.deliveryId} given up — its gateway instance was lost while running it ${lost} (killed, frozen past its lock or stopped past its drain: ${reason}), and the shared queue does not run it again; find what ends the instances while it runs (their logs; an OOM kill in the system's), fix it, then run svc webhook redeliver ${shellWord(run.deliveryId)} on the instance that answered its request`,
      );
      options.givenUp?.(
        run,
        new Error(
          `given up by the shared queue: its instance was lost while running it ${lost} (${reason}) — fix the cause, then svc webhook redeliver it where its request was answered`,
        ),
      );
    },
    notRecorded(shared, err, refused) {
      // Its run ended outside its slot (and was recorded there): another instance only finishes its job.
      if (shared.done === true) return;
      const fields = { route: shared.routeName, delivery_id: shared.deliveryId, err };
      const ended = `[webhook] ${shared.routeName}: run of delivery ${shared.deliveryId} ended here`;
      // The job itself is gone (Redis restarted empty, flushed, or evicted it): nothing runs it again.
      if (/^Missing key for job/.test(err)) {
        logger.warn(
          fields,
          `${ended}, but Redis did not record its end (${err}): ${JOB_GONE}: it ran here once and does not run again`,
        );
        return;
      }
      const lockSeconds = (options.stall?.lockDurationMs ?? LOCK_MS) / 1000;
      const again =
        "the shared queue runs it again on some instance (this one included) — its reply may be delivered twice";
      // Refused itself (a full Redis): the job stays running, unfinished, until its lock expires.
      if (REFUSED.test(err)) {
        logger.warn(
          fields,
          `${ended}, but Redis refused to record its end (${err}; ${refusalHint(err)}), so once its ${lockSeconds} s lock expires ${again}`,
        );
        return;
      }
      // BullMQ renews the lock with a write, which a full Redis refuses: the lock lapses while the run goes on.
      const cause =
        refused === undefined
          ? "Redis frozen, paused or overloaded, or this instance paused, for longer than that"
          : `Redis refused writes (${refused}) while it ran, the lock's renewal among them, for longer than that; ${refusalHint(refused)}`;
      logger.warn(
        fields,
        `${ended}, but Redis did not record its end (${err}): its ${lockSeconds} s lock had expired first (${cause}) or another instance had taken the run over, so ${again}`,
      );
    },
    ...(options.retryingCap === undefined ? {} : { outsideCap: options.retryingCap }),
    ...(options.onRetryingCap === undefined ? {} : { onOutsideCap: options.onRetryingCap }),
    // A stop hands it on at once: when its retry is due, on Redis's clock, for the instance that takes it.
    handedOn: (shared, redisAhead) =>
      // One handed on to this instance and not yet read here (`dueHere`) goes on named as it was.
      shared.retry === undefined || shared.handedOnDue?.retryDueAt === shared.retry.dueAt
        ? shared
        : {
            ...shared,
            handedOnDue: { retryDueAt: shared.retry.dueAt, onRedis: shared.retry.dueAt + redisAhead },
          },
    async process(stored, signal, job, _token, queueSlot) {
      // Its delivery ended on the instance that released its slot: nothing is left to do.
      if (stored.done === true) return;
      // What a stop that handed it on said of its retry's due time is read below, and not stored again.
      const { handedOnDue, ...shared } = stored;
      // Its hash was gone (evicted) while its id waited in the queue: taken, it has no run to go on with.
      if (shared.routeName === undefined || shared.deliveryId === undefined) {
        logger.warn({ job: job.id }, goneJobLine(job.id ?? ""));
        queueSlot.removeWhenFinished();
        return;
      }
      const { route: accepted, reply: madeReply, retry: storedRetry, done: _done, ...pending } = shared;
      const found = options.lookup(pending.routeName);
      const current = found !== undefined && found.profile === pending.profile ? found.route : undefined;
      const reason = () =>
        unservedRouteReason(
          pending.routeName,
          pending.profile,
          found,
          options.disabled?.(pending.routeName) === true,
        );
      // A route gone since (a subscription disabled or removed) runs as it was accepted, as in one process.
      const route = current ?? accepted;
      if (route === undefined) {
        // Stored by a version that kept only the route's name: it waits in Redis for its route, never dropped.
        const id = `${pending.routeName}:${pending.deliveryId}`;
        if (!waitingForRoute.has(id)) {
          waitingForRoute.add(id);
          logger.warn(
            { route: pending.routeName, delivery_id: pending.deliveryId, profile: pending.profile },
            runWaitsForRouteLine(
              pending.routeName,
              pending.profile,
              reason(),
              options.stall?.laterMs ?? RUN_LATER_MS,
              jobIdOf(seenKey(pending.routeName, pending.deliveryId)),
            ),
          );
        }
        throw new RunLater();
      }
      waitingForRoute.delete(`${pending.routeName}:${pending.deliveryId}`);
      // Another instance may have accepted it under a route this instance's config never had.
      if (current === undefined)
        logger.info(
          { route: pending.routeName, delivery_id: pending.deliveryId },
          `[webhook] ${pending.routeName}: ${reason()}; the run goes on with the route it was accepted under`,
        );
      // A route no config of this instance serves under that name (not one disabled or bound to another
      // profile here): its toolsets were read against the accepting instance's MCP servers.
      const elsewhere = found === undefined && options.disabled?.(pending.routeName) !== true;
      const run: QueuedRun = elsewhere ? { ...pending, route, routeAsAccepted: true } : { ...pending, route };
      // Handed on by a stop before its retry was due: due when Redis's clock says, read on this instance's
      // (the one its delivery waits on), so the two instances' clocks need not agree. Read once its delivery
      // has taken its recipient's turn (`dueHere`): read first, a later delivery to the recipient taken with it
      // went into the line ahead of it. Redis not answering, the stopping instance's due time stands.
      const onRedis =
        storedRetry !== undefined && handedOnDue?.retryDueAt === storedRetry.dueAt
          ? handedOnDue.onRedis
          : undefined;
      // The reply is kept with the job as the delivery waits to retry: the worker's slot is free meanwhile,
      // and an instance that takes the job over (this one stopped or killed) delivers it without the agent.
      // So is the retry it waits for, with the attempts made: that instance delivers it once due, counting on.
      let reply: KeptReply | undefined;
      let retry = storedRetry;
      const slot: RunSlot = {
        madeReply,
        dueRetry: storedRetry,
        ...(onRedis === undefined || storedRetry === undefined
          ? {}
          : {
              async dueHere() {
                const dueAt = await queueSlot.fromRedisClock(onRedis).catch(() => storedRetry.dueAt);
                // Stored from here on as this instance reads it.
                if (retry === storedRetry) retry = { ...storedRetry, dueAt };
                return dueAt;
              },
            }),
        inLine: (turn) => queueSlot.inLine(turn),
        replied(made) {
          reply = made;
        },
        release(_run, due) {
          if (reply === undefined) return Promise.resolve(false);
          // Waiting its turn behind another delivery keeps the retry stored before (its attempts count on).
          if (due !== undefined) retry = due;
          // Its turn taken before its due time was read here (`dueHere`): stored still named on Redis's clock.
          const kept: SharedRun =
            retry === undefined
              ? { ...shared, reply }
              : retry === storedRetry && onRedis !== undefined
                ? { ...shared, reply, retry, handedOnDue: { retryDueAt: retry.dueAt, onRedis } }
                : { ...shared, reply, retry };
          return queueSlot.release(kept, { ...shared, reply, done: true }, retry?.dueAt);
        },
        async keepRetry(due) {
          if (reply === undefined) return;
          retry = due;
          // The part goes out whatever Redis does: while it is down or refusing it is not asked, and a write
          // that does not answer (a frozen Redis; the connection queues it until it is back) is waited for
          // KEEP_RETRY_WAIT_MS at most. An instance that takes the job over then goes on from the last part stored.
          if (health.inOutage() || health.refusing()) return;
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            queueSlot.store({ ...shared, reply, retry }, { ...shared, reply, done: true }, due.dueAt),
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, KEEP_RETRY_WAIT_MS);
            }),
          ]).catch(() => {});
          clearTimeout(timer);
        },
      };
      const key = seenKey(run.routeName, run.deliveryId);
      try {
        await options.execute(run, signal, slot);
        if (forgotten.has(key)) queueSlot.forgetWhenFinished(keys.seen(key));
      } catch (err) {
        // Its failure's notice was delivered as the stop came: the run ended, failed, as without the stop.
        // Finished: run again (or handed on with its notice), it would send the notice a second time.
        if (err instanceof RunFailedAtStop) {
          if (!(err.cause instanceof LoggedError))
            logger.error(
              { route: run.routeName, delivery_id: run.deliveryId, err: describeError(err.cause) },
              `[webhook] ${run.routeName}: agent run failed`,
            );
          return;
        }
        if (signal.aborted) throw err;
        // Its agent ended by the stop's own signal: not failed; back in Redis, for any instance to run (this
        // one after its restart), as a run the drain cut short is.
        if (err instanceof RunKeptForRestart) {
          logger.info(
            { route: run.routeName, delivery_id: run.deliveryId },
            `[webhook] ${run.routeName}: the agent command was ended by the gateway's stop signal — the run is kept in Redis and runs again on some instance (this one after its restart)`,
          );
          throw new RunAfterStop();
        }
        // Finished (not retried), as in memory: the failure is the run's outcome.
        if (err instanceof LoggedError) return;
        logger.error(
          { route: run.routeName, delivery_id: run.deliveryId, err: describeError(err) },
          `[webhook] ${run.routeName}: agent run failed`,
        );
      } finally {
        forgotten.delete(key);
      }
    },
  });
  const coalescing: SharedCoalescing = createSharedCoalescing({
    url,
    redis,
    keys,
    health,
    logger,
    ...stall,
    elapsed: options.elapsed,
    async dispatch(run, superseded, generation, reason) {
      const prompt = superseded === 0 ? run.prompt : `${coalesceNote(superseded)}\n\n${run.prompt}`;
      await runs.enqueue(`coalesce-${generation}`, { ...run, prompt });
      // Said once its run is stored: a group whose run Redis refuses is fired again, and said then.
      logger.info(
        { route: run.routeName, delivery_id: run.deliveryId, superseded, reason },
        `[webhook] ${run.routeName}: coalesced group dispatched`,
      );
    },
  });
  logger.info(
    `[state] Shared state in Redis at ${label} (this instance runs ${options.maxConcurrentRuns} at once)`,
  );
  const eviction = await evictionProblem(redis, label);
  if (eviction !== undefined) logger.warn({ redis: label }, `[state] state.redis_url: ${eviction}`);
  const persistence = await persistenceProblem(redis, label);
  if (persistence !== undefined) logger.warn({ redis: label }, `[state] state.redis_url: ${persistence}`);
  await watchServerSeen({ redis, keys, health, logger, label });

  /**
   * Keys whose idempotency record also cleared the way for their run's add (`recordAndClear`), with when
   * (the clock that is never set): their enqueue sends nothing before its add. Taken by the enqueue; one
   * whose event stored no run (another mode, a 503) is dropped past CLEARED_MAX or ignored past CLEARED_FOR_MS.
   */
  const cleared = new Map<string, number>();
  const recordAndClear = runs.recordAndClear(redis);
  const makeRecord = (record: string, key: string, token: string, seconds: number) => {
    // Route names hold no `:`. Only a route whose events run an agent stores a run under the key: the
    // others (direct deliveries, cron fires, groups) get the plain record, and no add mark.
    const route = options.lookup(key.slice(0, key.indexOf(":")))?.route;
    if (
      route !== undefined &&
      (route.deliver_only || route.cron_job !== undefined || route.coalesce !== undefined)
    )
      return undefined;
    return recordAndClear(record, key, token, seconds, RUN_ENQUEUE.renewAfterMs).then((made) => {
      if (made !== null) {
        cleared.delete(key);
        cleared.set(key, options.elapsed());
        if (cleared.size > CLEARED_MAX) cleared.delete(cleared.keys().next().value as string);
      }
      return made;
    });
  };

  // No connection of its own until told to receive.
  const mirrorTold = options.mirrorTold;
  const sessionMirrors: SharedSessionMirrors | undefined =
    mirrorTold === undefined
      ? undefined
      : sharedSessionMirrors({ redis, keys, health, logger, write: mirrorTold });

  let waiting = 0;
  let reading: Promise<number> | undefined;
  const readWaiting = () =>
    (reading ??= runs
      .waiting(DEPTH_READ_TIMEOUT_MS)
      .then(
        (n) => (waiting = n),
        () => waiting,
      )
      .finally(() => {
        reading = undefined;
      }));

  return {
    limiter: createSharedRateLimiter(redis, keys, health, {
      limit: options.rateLimit,
      windowMs: RATE_WINDOW_MS,
      now: options.elapsed,
    }),
    seen: createSharedIdempotency(
      redis,
      keys,
      health,
      undefined,
      undefined,
      undefined,
      // A duplicate of an id recorded by an instance killed before storing its run is not answered `duplicate`.
      (key) => runs.stored(key),
      makeRecord,
    ),
    async enqueueRun(event) {
      const { payload: _p, headers: _h, ...run } = event;
      const key = seenKey(event.routeName, event.deliveryId);
      const recordedAt = cleared.get(key);
      cleared.delete(key);
      const fresh = recordedAt !== undefined && options.elapsed() - recordedAt < CLEARED_FOR_MS;
      await runs.enqueue(
        key,
        { ...pendingRunOf(run), route: storedRoute(event.route) },
        fresh ? { ...RUN_ENQUEUE, cleared: true } : RUN_ENQUEUE,
      );
      return true;
    },
    forgetRun(run) {
      forgotten.add(seenKey(run.routeName, run.deliveryId));
    },
    coalesce: (event) => {
      const { payload: _p, headers: _h, ...run } = event;
      return coalescing.offer(event, { ...pendingRunOf(run), route: storedRoute(event.route) });
    },
    cronLease: createCronLease(redis, keys, health),
    carryOver: (ids) => carryIds(redis, keys, ids),
    sessionMirrors,
    available: () => !health.inOutage() && !health.refusing(),
    runDepth: async () => ({
      waiting: await readWaiting(),
      active: runs.running(),
      retrying: runs.outside(),
    }),
    watchRunDepth(told, everyMs, timers) {
      stopWatching?.();
      let stopped = false;
      let reading = false;
      let again = false;
      const read = () => {
        if (stopped) return;
        if (reading) {
          again = true;
          return;
        }
        const tell = () => told({ waiting, active: runs.running(), retrying: runs.outside() });
        // Commands wait for the reconnect: one sent every `everyMs` would pile up in the connection.
        if (health.inOutage()) return tell();
        reading = true;
        void runs
          .waiting(DEPTH_READ_TIMEOUT_MS)
          .then(
            (n) => {
              waiting = n;
            },
            () => {},
          )
          .then(() => {
            reading = false;
            if (stopped) return;
            tell();
            if (again) {
              again = false;
              read();
            }
          });
      };
      let timer = timers.setTimeout(function tick() {
        read();
        timer = timers.setTimeout(tick, everyMs);
      }, everyMs);
      depthChanged = read;
      stopWatching = () => {
        stopped = true;
        depthChanged = undefined;
        timers.clearTimeout(timer);
      };
      read();
    },
    start() {
      runs.start();
      coalescing.start();
    },
    async stop(drainMs) {
      await Promise.all([runs.close(drainMs), coalescing.close(drainMs)]);
    },
    async disconnect() {
      stopWatching?.();
      await sessionMirrors?.close();
      health.closing(redis);
      if (redis.status === "ready") {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          redis.quit().catch(() => {}),
          new Promise((resolve) => {
            timer = setTimeout(resolve, 2000);
          }),
        ]);
        clearTimeout(timer);
      }
      redis.disconnect();
    },
  };
}

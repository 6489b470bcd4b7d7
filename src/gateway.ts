import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fromCallback } from "xstate";
import { createRunExecutor, createRunner } from "./actors/agent/index.js";
import type { AgentRunner } from "./actors/agent/runner.js";
import { coalescerActor, createCoalescer, withCoalesceNote } from "./actors/coalescer.js";
import { createCronScheduler, cronActor, runCronJob } from "./actors/cron.js";
import { createDeliverer } from "./actors/deliver.js";
import { startGatewayMcp } from "./actors/mcp/gatewayHub.js";
import { createShutdownSaver } from "./actors/pendingRuns.js";
import { missingReferenceWarnings } from "./actors/routeReferences.js";
import { createRouteRegistry, type RouteTable, routesActor, routeTable } from "./actors/routes.js";
import {
  activeRuns,
  drainRuns,
  enqueueRun,
  RUN_QUEUE_CAP,
  type RunsRef,
  runsMachine,
  takeWaitingRuns,
  unfinishedRuns,
} from "./actors/runs.js";
import { startSystem } from "./actors/system.js";
import { howToEnableWebhook } from "./config/load.js";
import { profileBindingWarnings } from "./config/profileWarnings.js";
import { restartOnlyChanges } from "./config/restartOnly.js";
import type { Config } from "./config/schema.js";
import { LOOPBACK_HOSTS } from "./config/validate.js";
import { describeError, SvcError } from "./errors.js";
import { checkedConfig, describeRoutes } from "./gatewayConfig.js";
import type { Gateway, GatewayOptions } from "./gatewayTypes.js";
import { createRequestHandler } from "./io/http/core.js";
import { listenFailureHint } from "./io/http/listenHint.js";
import { type ServerHandle, startHttpServer } from "./io/http/server.js";
import { createLogger } from "./io/log.js";
import { existingProfiles, profilesOnDisk } from "./io/profiles.js";
import { runScript } from "./io/scripts.js";
import { removeStaleStoreTempFiles } from "./io/stores/atomicFile.js";
import { cronStore } from "./io/stores/cronStore.js";
import { readPendingRuns, writePendingRuns } from "./io/stores/pendingRuns.js";
import { readSeenIds, removeSeenIds, saveSeenIds } from "./io/stores/seenIds.js";
import { createSubscriptionSource } from "./io/stores/subscriptions.js";
import { checkTargets } from "./io/targets/check.js";
import { createTargets } from "./io/targets/registry.js";
import { targetStartupProblems, targetWarnings } from "./io/targets/validate.js";
import { pipelineLogHooks } from "./pipelineLogHooks.js";
import { createProfileResources } from "./profileResources.js";
import { redisStateFor } from "./redisState.js";
import { resumeSavedRuns } from "./resumeSavedRuns.js";
import { createPipeline } from "./streams/pipeline.js";
import { createFixedWindowLimiter } from "./streams/rateLimiter.js";
import { createSeenCache } from "./streams/seenCache.js";
import { verifySignature } from "./streams/signatures.js";

export { describeRoutes } from "./gatewayConfig.js";
export type { Gateway, GatewayOptions } from "./gatewayTypes.js";

/** The idempotency cache keeps 1 hour (spec 6) and at most this many ids; the oldest are evicted first. */
export const SEEN_CACHE_MAX_ENTRIES = 100_000;
const SEEN_TTL_MS = 60 * 60 * 1000;

/** The delivery platforms' settings (all of `platforms` but the webhook adapter), to see whether a reload changed them. */
const platformSettings = (config: Config): string =>
  JSON.stringify({ ...config.platforms, webhook: undefined });

export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  let loaded = checkedConfig(options);
  /** What the listener, the run slots and MCP approvals were built from (a reload cannot change them). */
  const startedConfig = loaded.config;
  const { paths } = loaded;
  const webhook = loaded.config.platforms.webhook;
  const howToEnable = howToEnableWebhook(loaded);
  // With the adapter off the gateway still runs for its MCP servers; with nothing at all to run it refuses.
  if (!webhook.enabled && Object.keys(loaded.config.mcp_servers).length === 0) {
    throw new SvcError(
      "startup_refused",
      `${loaded.enabledFrom} is false — the webhook adapter is off and no mcp_servers are configured, so there is nothing to run. ${howToEnable}`,
    );
  }
  const now = options.now ?? Date.now;
  const logger = options.logger ?? createLogger({ file: paths.gatewayLog, buffered: true });
  const system = startSystem({ logger, ...(options.inspect ? { inspect: options.inspect } : {}) });
  const targetDeps = { logger, ...(options.env === undefined ? {} : { env: options.env }) };
  // Rebuilt by a reload that changes platforms.<name> (a new token, a platform enabled).
  let targets = createTargets(loaded.config, targetDeps);
  for (const warning of targetWarnings(targetStartupProblems(loaded.config, paths.config)))
    logger.warn(warning);
  const deliverer = createDeliverer({ targets: () => targets, logger, paths });
  // Credentials checks report each platform's state; they do not hold up the listener.
  void checkTargets(targets, logger);
  const dynamicRoutes =
    options.dynamicRoutes ??
    createSubscriptionSource(paths.subscriptions, logger, {
      loopback: LOOPBACK_HOSTS.has(options.host ?? webhook.host),
    });
  const registry = createRouteRegistry(routeTable(loaded.config), dynamicRoutes);
  const routesRef = system.spawn("routes", routesActor(registry));
  const limiter = createFixedWindowLimiter({ limit: webhook.rate_limit, windowMs: 60_000, now });
  const seen = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: SEEN_CACHE_MAX_ENTRIES, now });
  try {
    seen.restore(readSeenIds(paths.seenIds));
  } catch (err) {
    logger.warn(
      { err: describeError(err) },
      `[webhook] ${paths.seenIds} could not be read; delivery ids seen before the restart are forgotten (their retries will run)`,
    );
  }
  // state.backend: redis — idempotency, rate limits, the run queue, coalescing and cron leases are shared.
  const redisState = await redisStateFor(loaded.config.state, {
    configFile: paths.config,
    logger,
    maxConcurrentRuns: loaded.config.agent.max_concurrent_runs,
    rateLimit: webhook.rate_limit,
    lookup: (name) => registry.lookup(name),
    execute: (run, signal) =>
      run.route.cron_job === undefined ? executeRun(run, signal) : scheduler.runFired(run, signal),
    ...(options.redisStall === undefined ? {} : { stall: options.redisStall }),
  }).catch((err: unknown) => {
    system.shutdown();
    throw err;
  });
  const rateLimiter = redisState?.limiter ?? limiter;
  const forget = redisState
    ? (key: string) => void redisState.seen.forget(key)
    : (key: string) => seen.delete(key);
  let runner: AgentRunner = createRunner(loaded.config.agent);
  const {
    paths: profilePaths,
    runJournal,
    listReader,
    closeJournals,
  } = createProfileResources(paths.home, logger);
  const runs: RunsRef = system.spawn("runs", runsMachine, {
    maxConcurrent: loaded.config.agent.max_concurrent_runs,
    logger,
    execute: (run, signal) =>
      run.route.cron_job === undefined ? executeRun(run, signal) : scheduler.runFired(run, signal),
  });
  const executeRun = createRunExecutor({
    runner: () => runner,
    deliverer,
    logger,
    skillsDir: (p) => profilePaths(p).skills,
    recordRun: (profile, run) => runJournal(profile).record(run),
  });
  const hooks = pipelineLogHooks(logger);
  // Coalescing groups and cron jobs (issue 3): flushed on stop and reload, so no pending group is dropped.
  const coalescerRef = system.spawn(
    "coalescer",
    coalescerActor(() => coalescer),
  );
  const coalescer = createCoalescer({
    logger,
    // Past the queue's cap: the events were answered 202 and the group already held them in memory.
    dispatch: (event, superseded) => enqueueRun(runs, withCoalesceNote(event, superseded), Infinity),
    ...(options.timers === undefined ? {} : { clock: options.timers }),
    ...(options.inspect === undefined ? {} : { parent: coalescerRef }),
  });
  // Every profile on disk has its own cron store; a cron_job route fires the job of its own profile.
  const scheduler = createCronScheduler({
    stores: {
      profiles: () => existingProfiles(paths.home),
      store: (profile) => cronStore(profilePaths(profile).cronJobs),
    },
    logger,
    runJob: (job, prompt, trigger, profile, signal, firedBy) =>
      runCronJob({ runner, deliverer }, job, prompt, trigger, profile, signal, firedBy),
    // Jobs fired by webhook events share the agent runs' bound (agent.max_concurrent_runs) and queue.
    enqueue: (event) =>
      redisState?.enqueueRun(event) ?? enqueueRun(runs, event, options.runQueueCap ?? RUN_QUEUE_CAP),
    ...(redisState ? { claim: redisState.cronLease.claim } : {}),
  });
  system.spawn("cron", cronActor(scheduler));
  const warnMissingReferences = (table: RouteTable) => {
    for (const warning of profileBindingWarnings(table.staticRoutes.values(), {
      file: paths.config,
      multiplex: table.multiplexProfiles,
      profiles: profilesOnDisk(paths.home),
      profilesDir: join(paths.home, "profiles"),
    }))
      logger.warn(warning);
    void missingReferenceWarnings(table, {
      configFile: paths.config,
      scriptsDir: (profile) => profilePaths(profile).scripts,
      cronStore: (profile) => ({
        store: cronStore(profilePaths(profile).cronJobs),
        path: profilePaths(profile).cronJobs,
      }),
    }).then((warnings) => {
      for (const warning of warnings) logger.warn(warning);
    });
  };
  warnMissingReferences(registry.current());

  const pipeline = createPipeline({
    routes: {
      lookup: (name) => registry.lookup(name),
      multiplexProfiles: () => registry.current().multiplexProfiles,
    },
    maxBodyBytes: () => registry.current().maxBodyBytes,
    tryAcquire: (route) => rateLimiter.tryAcquire(route),
    msUntilReset: (route) => rateLimiter.msUntilReset(route),
    auth: { verify: verifySignature, ...hooks.auth },
    onPing: hooks.onPing,
    filters: {
      listReader,
    },
    script: {
      runScript: (request) =>
        runScript({
          scriptsDir: profilePaths(request.profile).scripts,
          script: request.script,
          payload: request.payload,
          timeoutMs: registry.current().scriptTimeoutMs,
          route: request.routeName,
          event: request.event,
          deliveryId: request.deliveryId,
        }),
      onIgnored: hooks.onScriptIgnored,
    },
    idempotency: {
      checkAndAdd: redisState ? (key) => redisState.seen.checkAndAdd(key) : (key) => seen.checkAndAdd(key),
      randomId: randomUUID,
    },
    dispatch: {
      modes: {
        coalesce: redisState ? (event) => redisState.coalesce(event) : (event) => coalescer.offer(event),
        fireCronJob: (jobRef, event) => scheduler.fire(jobRef, event),
        ...options.eventModes,
      },
      enqueueRun: redisState
        ? (event) => redisState.enqueueRun(event)
        : (event) => enqueueRun(runs, event, options.runQueueCap ?? RUN_QUEUE_CAP),
      forget,
      onCronUnavailable: hooks.onCronUnavailable,
      onCoalesceUnavailable: hooks.onCoalesceUnavailable,
    },
    deliver: {
      async deliverDirect(event) {
        try {
          await deliverer.deliver({
            target: event.route.deliver,
            message: {
              text: event.prompt,
              extra: event.extra,
              route: event.routeName,
              deliveryId: event.deliveryId,
              profile: event.profile === "default" ? undefined : event.profile,
            },
            mode: "direct",
            mirrorToSession: event.route.mirror_to_session,
          });
          return true;
        } catch (err) {
          hooks.onDeliveryFailed(event, err);
          return false;
        }
      },
      forget,
    },
    onFailure: hooks.onStageFailure,
  });

  const host = options.host ?? webhook.host;
  let server: ServerHandle = { impl: "node", host, port: 0, close() {} };
  if (webhook.enabled) {
    try {
      server = await startHttpServer({
        host,
        port: options.port ?? webhook.port,
        logger,
        impl: options.http ?? webhook.http_server,
        handler: createRequestHandler({
          pipeline,
          multiplexProfiles: () => registry.current().multiplexProfiles,
          maxBodyBytes: () => registry.current().maxBodyBytes,
          now,
          onInternalError: (err) => hooks.onStageFailure("ingress", err, undefined),
        }),
      });
    } catch (err) {
      system.shutdown();
      void redisState?.stop(0);
      throw new SvcError("startup_refused", `${(err as Error).message} — ${listenFailureHint(host)}`);
    }
  }
  removeSeenIds(paths.seenIds);
  removeStaleStoreTempFiles(paths.home);
  system.spawn(
    "webhook-ingress",
    fromCallback(() => () => server.close()),
  );
  const mcp = startGatewayMcp({
    paths,
    servers: loaded.config.mcp_servers,
    approvals: loaded.config.gateway.approvals,
    logger,
    runner: () => runner,
    system,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  if (webhook.enabled) {
    logger.info(
      `[webhook] Listening on ${host}:${server.port} — routes: ${describeRoutes(registry.names())}`,
    );
    if (registry.names().length === 0) hooks.printHowToAddRoute(paths.config);
  } else {
    logger.warn(
      `[webhook] Adapter disabled (${loaded.enabledFrom} is false); running MCP servers only. ${howToEnable}`,
    );
  }

  resumeSavedRuns(paths.pendingRuns, runs, (name) => registry.lookup(name), hooks);
  redisState?.start();

  let seenSaveFailed = false;
  const saveSeen = () => {
    try {
      saveSeenIds(paths.seenIds, seen.entries());
    } catch (err) {
      if (seenSaveFailed) return;
      seenSaveFailed = true;
      logger.warn(
        { err: describeError(err) },
        `[webhook] delivery ids not saved to ${paths.seenIds}; retries after the restart will run again`,
      );
    }
  };
  let stopping: Promise<void> | undefined;
  return {
    host,
    port: server.port,
    routes: () => registry.names(),
    reload() {
      // Judged against the address actually bound (a host change waits for a restart): a config that
      // moves to 127.0.0.1 with INSECURE_NO_AUTH must not open routes on a public listener (spec 5 rule 4).
      const next = checkedConfig({ ...options, host });
      for (const warning of targetWarnings(targetStartupProblems(next.config, paths.config)))
        logger.warn(warning);
      coalescer.flushAll();
      const table = routeTable(next.config);
      routesRef.send({ type: "replace", table });
      warnMissingReferences(table);
      const nextWebhook = next.config.platforms.webhook;
      // Open windows keep their count: a reload must not hand every route a fresh budget.
      rateLimiter.setLimit(nextWebhook.rate_limit);
      runner = createRunner(next.config.agent);
      if (platformSettings(next.config) !== platformSettings(loaded.config)) {
        targets = createTargets(next.config, targetDeps);
        void checkTargets(targets, logger);
      }
      const needRestart = restartOnlyChanges(startedConfig, next.config);
      if (needRestart.length > 0) {
        logger.warn(`[gateway] ${needRestart.join(", ")} changed: this takes effect after a restart`);
      }
      void mcp
        .reload(next.config.mcp_servers)
        .catch((err: unknown) => logger.error({ err: String(err) }, "[mcp] reload failed"));
      loaded = next;
      logger.info(`[webhook] Reloaded ${paths.config} — routes: ${describeRoutes(registry.names())}`);
      return { routes: registry.names() };
    },
    stop() {
      stopping ??= (async () => {
        server.close();
        // Intake closes at once; requests still in the pipeline (a script, a direct delivery) are answered.
        const pipelineClosed = pipeline.close();
        scheduler.stop();
        const savePending = createShutdownSaver(readPendingRuns, writePendingRuns, paths.pendingRuns);
        // Before waiting for anything (a script may run for script_timeout_seconds): a supervisor that
        // kills sooner than the drain (`docker stop` sends SIGKILL after 10 s) then loses no accepted run,
        // pending coalescing group or remembered delivery id; runs finished meanwhile run again
        // (at-least-once). The groups fire once the pipeline is empty, so a late event still joins its group.
        const checkpoint = (onlyWhenNew: boolean) => {
          saveSeen();
          try {
            savePending([...unfinishedRuns(runs), ...coalescer.pendingEvents()], { onlyWhenNew });
          } catch {
            // The final save reports the problem.
          }
        };
        checkpoint(false);
        await pipelineClosed;
        coalescer.flushAll();
        // With what the requests answered meanwhile accepted, coalesced or remembered.
        checkpoint(true);
        const drainMs = options.drainTimeoutMs ?? loaded.config.gateway.drain_timeout_seconds * 1000;
        // Waiting runs stay in Redis for the other instances (or this one's restart).
        await redisState?.stop(drainMs);
        const drained = await drainRuns(runs, drainMs);
        // Past the drain timeout no waiting run starts any more; with the ones still running at the end
        // they are saved for the next start.
        const waiting = drained ? [] : takeWaitingRuns(runs);
        await Promise.race([
          scheduler.idle(),
          new Promise((resolve) => setTimeout(resolve, drainMs).unref()),
        ]);
        await mcp.stop();
        const unfinished = [...activeRuns(runs), ...waiting];
        try {
          savePending(unfinished);
          if (unfinished.length > 0) hooks.onRunsSaved(unfinished, paths.pendingRuns);
        } catch (err) {
          hooks.onRunsLost(unfinished, paths.pendingRuns, err);
        }
        await closeJournals();
        system.shutdown();
      })();
      return stopping;
    },
  };
}

import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { RunExecutor } from "../actors/runs.js";
import { startSystem } from "../actors/system.js";
import { type Clock, systemClock } from "../clock.js";
import { emptiedEnvProblem } from "../config/envFile.js";
import { givenBy } from "../config/givenValues.js";
import { isLoopbackHost } from "../config/host.js";
import { howToEnableWebhook, type LoadedConfig } from "../config/load.js";
import { describeRestartKeys, restartOnlyChanges } from "../config/restartOnly.js";
import { settingKey } from "../config/sections/webhook.js";
import {
  defaultToolsetWithoutSearch,
  disabledServerToolsets,
  unusedSettingWarnings,
} from "../config/unusedSettings.js";
import { nothingToRun, webhookOffReason } from "../config/webhookEnabled.js";
import { subscriptionSecretValues } from "../config/webhookSecrets.js";
import { describeError, StoppedWhileStarting, SvcError } from "../errors.js";
import { cronRunNotes, takeCutOffRuns } from "../io/cronRunNotes.js";
import { listenAddress } from "../io/http/listenHint.js";
import { observeRequests } from "../io/http/observe.js";
import { createLogger } from "../io/log.js";
import { caFileProblems, caFileWarning } from "../io/mcp/caFileProblems.js";
import {
  createGatewayMetrics,
  type GatewayMetrics,
  type MetricSources,
} from "../io/metrics/gatewayMetrics.js";
import { proxyNotice } from "../io/outbound/proxyChoice.js";
import { processGroupFiles, stopOrphanGroups } from "../io/processGroups.js";
import { profilesOnDisk } from "../io/profiles.js";
import type { MirrorShare } from "../io/sessions/mirror.js";
import { signalsRead } from "../io/signalsRead.js";
import { lockHolder } from "../io/state/journal/dirLock.js";
import { removeStaleStoreTempFiles } from "../io/stores/atomicFile.js";
import { cronJobsStored, profileHasCronJobs } from "../io/stores/cronJobsStored.js";
import { createHistoryWriter, dropExpiredHistory, historyDir } from "../io/stores/deliveryHistory.js";
import { jobTargetProblems, routeTargetProblems } from "../io/targets/validate.js";
import {
  agentGroupsDir,
  awaitStateDir,
  cronRunsDir,
  GatewayState,
  openStateStore,
  stateDir,
} from "../state/gatewayState.js";
import { seenKey } from "../streams/stages/idempotency.js";
import { createAgent } from "./agent.js";
import { carryLocalIds, localIdsToCarry } from "./carryLocalIds.js";
import { createCoalescing } from "./coalescing.js";
import { checkedConfig, describeRoutes } from "./config.js";
import { type Cron, createCron, recordCutOffRuns } from "./cron.js";
import { createDeliveries } from "./deliveries.js";
import { historyHeaderNames, historyHooks } from "./deliveryHistoryHooks.js";
import { dynamicRoutesFor } from "./dynamicRoutes.js";
import { givenUpRuns } from "./givenUpRuns.js";
import { historyNotWritten } from "./historyNotWritten.js";
import { homeFileWarnings } from "./homeFileWarnings.js";
import { createIdempotency } from "./idempotency.js";
import { startIngress } from "./ingress.js";
import { pipelineLogHooks } from "./logHooks.js";
import { createMcp, type ProfileUse } from "./mcp.js";
import { metricsNotServedNotice } from "./metricsNotServedNotice.js";
import { notRunAgainLine, orphanRunsLine, orphanToolLine } from "./orphanRunsLine.js";
import { createProfileResources } from "./profileResources.js";
import { reloadRemovals } from "./reloadRemovals.js";
import { resumeSavedRuns, storeSavedRuns } from "./resumeSavedRuns.js";
import { answeredByRoute } from "./routeAnswers.js";
import { createRoutes } from "./routes.js";
import {
  servedSubscriptionWarnings,
  subscriptionReferenceWarnings,
  toolsetsWarnedAtLoad,
} from "./routeWarnings.js";
import { runDepth, timedRun, timedRuns } from "./runMetrics.js";
import { createRunQueue, createRuns } from "./runs.js";
import { sharedToolPrefixWarnings } from "./sharedToolPrefixes.js";
import { listeningOn, startupProblems } from "./startupProblems.js";
import { runStopSteps, type StopStep } from "./stopOrder.js";
import { toolCapWatch } from "./toolCapWarnings.js";
import type { Gateway, GatewayOptions } from "./types.js";
import { withUnlistenableHost } from "./unlistenableHost.js";
import { sayUnreadSubscriptionFile } from "./unreadSubscriptionFile.js";
import {
  allInterfacesAfterRestartWarning,
  allInterfacesWarning,
  unservedRoutesWarning,
  unservedSubscriptionsWarning,
} from "./webhookStartupWarnings.js";

export { describeRoutes } from "./config.js";
export { SEEN_CACHE_MAX_ENTRIES } from "./idempotency.js";
export type { Gateway, GatewayOptions } from "./types.js";

/**
 * The composition root: builds each subsystem in dependency order (each gets what it uses, nothing is
 * reached through a later declaration), then returns how to reload and stop them.
 */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  let loaded: LoadedConfig;
  try {
    loaded = checkedConfig(options);
  } catch (err) {
    throw await withUnlistenableHost(err, options);
  }
  options.onConfigRead?.();
  /** What the listener, the run slots and MCP approvals were built from (a reload cannot change them). */
  const startedConfig = loaded.config;
  const { config, paths } = loaded;
  const webhook = config.platforms.webhook;
  const howToEnable = howToEnableWebhook(loaded);
  // With the adapter off the gateway still runs for its MCP servers; with nothing at all to run it refuses.
  const idle = nothingToRun(loaded, () => cronJobsStored(paths.home));
  if (idle !== undefined) throw new SvcError("startup_refused", idle);
  // One clock for every timing rule; `now` and `timers` are narrower overrides tests use.
  const clock: Clock = options.clock ?? systemClock;
  const now = options.now ?? clock.now;
  // Durations (request and run times) are measured on the clock that is never set, not on `now`.
  const elapsed = options.elapsed ?? clock.elapsed;
  const groupTimers = options.timers ?? clock;
  const env = options.env === undefined ? {} : { env: options.env };
  const logger = options.logger ?? createLogger({ file: paths.gatewayLog, buffered: true });
  for (const warning of unusedSettingWarnings(config, paths.config)) logger.warn(warning);
  const searchless = defaultToolsetWithoutSearch(config, paths.config);
  if (searchless !== undefined) logger.info(searchless);
  for (const warning of sharedToolPrefixWarnings(config.mcp_servers, paths.config))
    logger.warn(`[mcp] ${warning}`);
  // A secret file created by hand (or restored from a backup) with a mode every user can read.
  for (const warning of homeFileWarnings(paths, loaded.fromFile, options.env)) logger.warn(warning);
  // The gateway the state directory's lock names, read before this start takes it: the one that held the
  // local journal (a killed one's agents' runs are the journal's; another's, a redis gateway's, are Redis's).
  // Only for notes of an older svc: a note now says its run's backend itself, also with the lock removed.
  const journalOwner = lockHolder(stateDir(paths.home));
  // Agents and route scripts a killed gateway left running: stopped before their runs run again
  // (docs/durability.md), and before the journal is opened: a start killed while it replays (after it took
  // the lock, which then names it) has stopped them already, so none is told by a lock that no longer names
  // the gateway that left it.
  const agentGroups = agentGroupsDir(paths.home);
  const notRunAgain: Array<{ readonly name: string; readonly profile: string | undefined }> = [];
  const tools: Array<{ readonly tool: string; readonly profile: string | undefined }> = [];
  let inJournal = 0;
  const orphans = stopOrphanGroups(
    agentGroups,
    (name, profile) => notRunAgain.push({ name, profile }),
    (owner, backend) => {
      if (backend === undefined ? owner === journalOwner : backend === "local") inJournal += 1;
    },
    (tool, profile) => tools.push({ tool, profile }),
  );
  const orphanRuns = orphans - notRunAgain.length - tools.length;
  if (orphanRuns > 0)
    logger.warn(orphanRunsLine(orphanRuns, config.state.backend, inJournal, stateDir(paths.home)));
  // A stdio MCP server, a `terminal` command: stopped so a call of the killed run does not go on beside its rerun.
  for (const { tool, profile } of tools) logger.warn(orphanToolLine(tool, profile));
  // A cron job's scheduled (or `svc cron run`) run is not journaled: its next_run moved on before it started.
  // Nor is an event a route script was deciding on: it was never answered, so its sender sends it again.
  // A label a newer svc wrote (not a job's name) is said as such.
  for (const { name, profile } of notRunAgain) logger.warn(notRunAgainLine(name, profile));
  // A lock a gateway of another PID namespace touched moments ago (a container restarted after a SIGKILL):
  // waited for until it is left untouched, then taken over as the journal is opened.
  if (options.stateStore === undefined)
    await awaitStateDir(config.state, paths.home, logger, clock, options.stopping);
  // Durable state (docs/durability.md): the journal is replayed before any request is read.
  const state = new GatewayState(
    options.stateStore ?? openStateStore(config.state, paths.home, logger, now, groupTimers),
    now,
    logger,
  );
  if (options.onTakenOver !== undefined) state.store.whenTakenOver?.(options.onTakenOver);
  const system = startSystem({ logger, ...(options.inspect ? { inspect: options.inspect } : {}) });
  const hooks = pipelineLogHooks(logger);
  const host = options.host ?? webhook.host;

  const retryingCapSaid = (cap: number) =>
    logger.warn(
      `[runs] ${cap} agent-run deliveries already wait to retry outside their run slots (the cap): a run whose delivery waits to retry now keeps its slot, so runs of other routes may wait — check the delivery warnings for the target that is down (said once)`,
    );
  const queue = createRunQueue({
    timers: clock,
    stopTimers: {
      setTimeout: (fn, ms) => groupTimers.setTimeout(fn, ms),
      clearTimeout: (id) => groupTimers.clearTimeout(id as never),
      elapsed,
    },
    pendingRunsFile: paths.pendingRuns,
    ...(options.runQueueCap === undefined ? {} : { cap: options.runQueueCap }),
    retrying: {
      ...(options.retryingDeliveryCap === undefined ? {} : { retryingCap: options.retryingDeliveryCap }),
      onRetryingCap: retryingCapSaid,
    },
  });
  // GET /metrics (docs/operations.md): unset `metrics` serves it on a loopback bind only.
  let mcpStates: () => string[] = () => [];
  let deliveryPlatforms: () => readonly string[] = () => [];
  let routeNames: () => readonly string[] = () => [];
  let idsForgotten: () => number = () => 0;
  let stateAvailable: () => boolean = () => state.store.available?.() ?? true;
  // With `redis` the runs wait in the shared queue, not in `queue` (set once it is open).
  let runDepthNow: MetricSources["runs"] = () => runDepth(queue.queue);
  const metrics: GatewayMetrics | undefined =
    webhook.enabled && (webhook.metrics ?? isLoopbackHost(host))
      ? createGatewayMetrics({
          runs: () => runDepthNow(),
          mcpStates: () => mcpStates(),
          stateAvailable: () => stateAvailable(),
          journalBytes: () => state.store.journalBytes?.(),
          deliveryIdsForgotten: () => idsForgotten(),
          deliveryPlatforms: () => deliveryPlatforms(),
          routes: () => routeNames(),
        })
      : undefined;
  // Recent deliveries for `svc webhook deliveries|redeliver` (docs/operations.md). Turned off, the files
  // recorded before still go once past their retention.
  if (!webhook.delivery_history) dropExpiredHistory(historyDir(paths.home), now());
  const history = webhook.delivery_history
    ? historyHooks(
        createHistoryWriter(historyDir(paths.home), historyNotWritten(logger, historyDir(paths.home))),
        now,
        // Called after the answer, for an accepted request only; `routes` exists by then.
        (name) => historyHeaderNames(routes.registry.lookup(name)?.route.filters),
        {
          elapsed,
          setTimeout: (fn, ms) => groupTimers.setTimeout(fn, ms),
          clearTimeout: (id) => groupTimers.clearTimeout(id),
        },
        (name) => routes.registry.lookup(name)?.secret,
      )
    : undefined;
  /** With state.backend: redis, how the other instances are told a delivery's session mirror (set below). */
  let mirrorShare: MirrorShare | undefined;
  const deliveries = createDeliveries({
    config,
    paths,
    logger,
    clock,
    now,
    elapsed,
    metrics,
    ...(history === undefined ? {} : { onOutcome: history.delivery }),
    mirrorsElsewhere: () => mirrorShare,
    ...env,
  });
  deliveryPlatforms = () => deliveries.platforms();
  const profiles = createProfileResources(paths.home, logger, now);
  // Days of run journals past their retention go at start, for every profile (not only at a profile's run).
  profiles.removeExpiredJournals();
  // `<route>\u0000<toolset>` of the unknown toolset names a load warned about: runs do not say them again.
  const warnedToolsets = new Set<string>();
  /**
   * With state.backend: redis, subscribes to the other instances' session mirrors while a route (a
   * subscription's too) has mirror_to_session, and closes that subscription while none has (set below).
   */
  let followMirrors: () => Promise<void> = () => Promise.resolve();
  // Dynamic subscriptions: webhook_subscriptions.json, or with state.backend: redis the shared hash.
  const dynamic = dynamicRoutesFor({
    state: config.state,
    subscriptionsFile: paths.subscriptions,
    configFile: paths.config,
    logger,
    ...(options.stopping === undefined ? {} : { signal: options.stopping }),
    loopback: isLoopbackHost(host),
    hasGlobalSecret: () => loaded.config.platforms.webhook.secret !== undefined,
    routeWarnings: (route, name) => {
      const servers = Object.keys(loaded.config.mcp_servers);
      const warnings = servedSubscriptionWarnings(
        route,
        name,
        () => ({
          multiplex: loaded.config.gateway.multiplex_profiles,
          profiles: profilesOnDisk(paths.home),
          profilesDir: join(paths.home, "profiles"),
        }),
        Object.keys(loaded.config.mcp_servers),
        { routes: loaded.config.platforms.webhook.routes, file: paths.config },
        (toolsets) => disabledServerToolsets(toolsets, loaded.config),
        (served) => routeTargetProblems(loaded.config, served),
      );
      // Said (with the likely spelling) unless a config.yaml route of its name shadows it: runs need not repeat it.
      if (!Object.hasOwn(loaded.config.platforms.webhook.routes, name))
        toolsetsWarnedAtLoad(warnedToolsets, name, route.toolsets, servers);
      return warnings;
    },
    // Not for a record a config.yaml route of its name shadows: that one is said not to be served at all.
    // Looked for on a later turn: a load happens inside a request's route lookup, which reads no more files.
    referenceWarnings: (route, name, where) =>
      Object.hasOwn(loaded.config.platforms.webhook.routes, name)
        ? Promise.resolve([])
        : new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
            subscriptionReferenceWarnings(route, name, where, paths),
          ),
    ...(options.subscriptionPollMs === undefined ? {} : { pollMs: options.subscriptionPollMs }),
    clock,
    loaded: () => void followMirrors(),
  });
  const routes = createRoutes({
    config,
    paths,
    logger,
    system,
    dynamic: options.dynamicRoutes ?? dynamic.source,
    warnedToolsets,
    path: (options.env ?? process.env).PATH ?? "",
  });
  routeNames = () => routes.registry.names();
  const idempotency = createIdempotency({
    paths,
    logger,
    clock: { now, elapsed },
    ...(state.store.backend === "local"
      ? { journal: { dir: stateDir(paths.home), replayedIds: state.recoveredSeen() } }
      : {}),
    ...(options.seenIdsCap === undefined ? {} : { maxEntries: options.seenIdsCap }),
  });
  state.restoreSeen(idempotency.seen);
  idsForgotten = () => idempotency.seen.forgotten();
  const groups = processGroupFiles(agentGroups, config.state.backend);
  let servedRoutes: ReadonlyMap<string, unknown> | undefined;
  let servedSecrets: readonly string[] = [];
  const agent = createAgent(config, {
    logger,
    home: paths.home,
    groups,
    dotenv: loaded.scope.secrets,
    env: loaded.scope.env,
    elapsed,
    // Every stored subscription's, a disabled one's too: its sender still signs with it. The same array
    // while the store is unchanged (a source without storedSecrets: while its routes are).
    subscriptionSecrets: () => {
      const source = options.dynamicRoutes ?? dynamic.source;
      if (source.storedSecrets !== undefined) return source.storedSecrets();
      const routes = source.current();
      if (routes !== servedRoutes) {
        servedRoutes = routes;
        servedSecrets = subscriptionSecretValues(routes.values());
      }
      return servedSecrets;
    },
  });
  // Coalescing groups and cron jobs: flushed on stop and reload, so no pending group is dropped.
  const coalescing = createCoalescing({
    system,
    logger,
    timers: groupTimers,
    ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
    dispatch: state.enqueue((event) => queue.enqueueRun(event, Infinity)),
    observer: state.coalesceObserver,
    ...(options.coalesceGroupCap === undefined ? {} : { maxGroups: options.coalesceGroupCap }),
    elapsed,
  });
  // state.backend: redis — idempotency, rate limits, the run queue, coalescing and cron leases are shared.
  // Its workers start only after everything is built, so `runs` below exists when they run one.
  let runs: { readonly execute: RunExecutor } | undefined;
  /** The cron scheduler, made below: a fired job's run the shared queue gives up is recorded in its `last_run`. */
  let cronScheduler: Cron["scheduler"] | undefined;
  // The Redis backend's modules (BullMQ, ioredis: about half a second to load) only when it is chosen.
  const redis = await (config.state.backend !== "redis"
    ? Promise.resolve(undefined)
    : import("../state/redisState.js").then(({ openRedisState }) =>
        openRedisState({
          settings: config.state,
          configFile: paths.config,
          takesRequests: webhook.enabled,
          logger,
          ...(options.stopping === undefined ? {} : { signal: options.stopping }),
          maxConcurrentRuns: config.agent.max_concurrent_runs,
          rateLimit: webhook.rate_limit,
          elapsed,
          lookup: (name) => routes.registry.lookup(name),
          disabled: (name) => dynamic.disabledNames().includes(name),
          execute: (run, signal, slot) =>
            runs === undefined
              ? Promise.reject(new Error("the gateway is not started"))
              : runs.execute(run, signal, slot),
          ...(options.retryingDeliveryCap === undefined ? {} : { retryingCap: options.retryingDeliveryCap }),
          onRetryingCap: retryingCapSaid,
          ...(options.redisStall === undefined ? {} : { stall: options.redisStall }),
          givenUp: givenUpRuns({
            metrics,
            onEnd: history === undefined ? undefined : (run, err) => history.run(run, err),
            journal: (profile, run) => profiles.runJournal(profile).record(run),
            firedJob: (run, err) => cronScheduler?.givenUp(run, err.message),
          }),
          // A chat's session may be in this instance's home while another instance delivers to the chat.
          mirrorTold: (mirror) => deliveries.deliverer.mirrorTold?.(mirror) ?? Promise.resolve(),
        }),
      )
  )
    .then(async (shared) => {
      if (options.dynamicRoutes === undefined)
        await dynamic.open().catch(async (err: unknown) => {
          await shared?.stop(0);
          await shared?.disconnect();
          throw err;
        });
      return shared;
    })
    .catch(async (err: unknown) => {
      system.shutdown();
      await state.close();
      throw err;
    });
  if (redis !== undefined) {
    mirrorShare = redis.sessionMirrors;
    stateAvailable = () => redis.available();
    runDepthNow = () => redis.runDepth();
    // Only a route that mirrors needs the other instances' mirrors: without one, no connection is opened
    // (nor a channel asked of the URL's ACL user).
    followMirrors = () =>
      redis.sessionMirrors?.receive(routes.registry.routes().some(({ route }) => route.mirror_to_session)) ??
      Promise.resolve();
    await followMirrors();
  }
  // Every profile on disk has its own cron store; a cron_job route fires the job of its own profile.
  const journaledEnqueue = state.enqueue((event) => queue.enqueueRun(event), { answered: queue });
  // Scheduled runs a killed gateway cut short (not journaled, so not run again): recorded as such.
  // With Redis, the due times they claimed are given back first, so that they are caught up as with local.
  await recordCutOffRuns(
    { logger, clock, profiles, releaseClaim: redis?.cronLease.releaseHeld },
    takeCutOffRuns(cronRunsDir(paths.home)),
  );
  const cron = createCron({
    system,
    paths,
    logger,
    clock,
    agent,
    deliverer: deliveries.deliverer,
    profiles,
    // Journaled like an agent run (local backend): a fire answered 202 runs after a crash too.
    enqueue: (event) => redis?.enqueueRun(event) ?? journaledEnqueue(event),
    dropped: history === undefined ? undefined : (run, why) => history.dropped(run, why),
    // Its store unreadable at its turn: the delivery ID forgotten as the arrival's 503 forgets it. In Redis,
    // with the finished job kept under it, once the job is recorded finished (else a retry would be
    // answered 202 and added as no job).
    forget:
      redis === undefined
        ? (run) => {
            state.forgetRun(run);
            idempotency.seen.delete(seenKey(run.routeName, run.deliveryId));
          }
        : (run) => redis.forgetRun(run),
    timeRun: (run) => timedRun(metrics, elapsed, run),
    claim: redis?.cronLease.claim,
    release: redis?.cronLease.release,
    heldAhead: redis?.cronLease.heldAhead,
    claimedDueTimes: redis?.cronLease.claimedDueTimes,
    claimHolder: redis?.cronLease.holder,
    // Against the config the deliverer's targets were made from (a reload's, once applied).
    targetProblems: (job) => jobTargetProblems(deliveries.config(), job),
    targetsVersion: () => deliveries.config(),
    runNotes: cronRunNotes(cronRunsDir(paths.home)),
    stopNear: () => queue.queue.stopNear(),
  });
  cronScheduler = cron.scheduler;
  // Another gateway took the state directory over (docs/durability.md): it schedules the jobs from now on, and
  // no run starts here any more (`trackRuns`); a run this one started would be cut short when it is stopped.
  const takenOver = () => state.store.takenOver?.() === true;
  state.store.whenTakenOver?.(() => cron.stop());
  runs = createRuns({
    system,
    queue,
    maxConcurrent: config.agent.max_concurrent_runs,
    logger,
    agent,
    deliverer: deliveries.deliverer,
    profiles,
    runFiredJob: (run, signal, slot) => cron.scheduler.runFired(run, signal, slot),
    warnedToolsets,
    inspecting: options.inspect !== undefined,
    // The runs go through the shared queue: under `--inspect`, the `runs` actor shows its counts.
    ...(redis === undefined
      ? {}
      : { sharedDepth: (told, everyMs) => redis.watchRunDepth(told, everyMs, clock) }),
    // Made once: a run allocates no closure for its timing or its history line.
    track: (execute) =>
      state.trackRuns(
        timedRuns(
          metrics,
          elapsed,
          execute,
          history === undefined ? undefined : (run, err) => history.run(run, err),
        ),
      ),
  });
  // A start that cannot listen (the port is taken), or that a stop signal came during, lets go of what it
  // opened: the next start takes the state directory's lock, and nothing is left running in this process.
  const letGo = async () => {
    system.shutdown();
    await redis?.stop(0);
    await redis?.disconnect();
    dynamic.close();
    await state.close();
  };
  // A stop signal that came during the synchronous work above (the journal's replay: seconds for a large
  // one) is handled once the event loop polls again: let it, so that it is taken before the listener opens.
  if (options.stopping !== undefined) await signalsRead();
  // A stop signal came during the start: nothing listens, and the saved runs stay where they are.
  if (options.stopping?.aborted === true) {
    await letGo();
    throw new StoppedWhileStarting();
  }
  // webhook-pending-runs.json's runs into the local journal before the listener opens: a request that comes
  // in as it opens then queues behind the saved runs (their deliveries take their chats' turns first).
  if (redis === undefined && state.store.backend === "local")
    await state.importSavedRuns(paths.pendingRuns, hooks);
  // A switch from local: the delivery ids the local backend would restore (webhook-seen-ids.json's, the
  // journal's) go into Redis before the listener opens, so a sender's retry of one is still a duplicate.
  if (redis !== undefined)
    await carryLocalIds({
      redis,
      ids: localIdsToCarry(idempotency.seen.entries(), state.store.seenByLocalJournal ?? [], now()),
      logger,
    });
  /** Named by each `/health` 200 (`Svc-Instance`), recorded in gateway.json by `svc gateway run`. */
  const instance = randomUUID();
  const ingress = await startIngress({
    durable: state.pipelineDeps().durable,
    // The rows of the 202s a sync (or a read of Redis's replies) released, and of a 200 delivered, are written
    // with them, not at the end of the turn.
    answeredKept: history?.flush,
    modes: (modes) => state.eventModes(modes),
    observe: (handler) =>
      observeRequests(handler, {
        logger,
        now: elapsed,
        metrics,
        // Unset `metrics` serves it because the bind is loopback: to this machine's scrapers, not through it.
        metricsLocalOnly: webhook.metrics === undefined,
        multiplexProfiles: () => routes.registry.current().multiplexProfiles,
        accessLog: () => loaded.config.platforms.webhook.access_log,
        onRouteRequest: history?.request,
        isRoute: answeredByRoute(routes.registry),
        refusesAfterHead: (options.http ?? webhook.http_server) === "node",
      }),
    config,
    host,
    port: options.port ?? webhook.port,
    portKey: settingKey(webhook, "port"),
    hostKey: settingKey(webhook, "host"),
    hostGiven: options.host === undefined ? givenBy(webhook, "host") : undefined,
    ...(options.inspectPort === undefined ? {} : { inspectPort: options.inspectPort }),
    home: paths.home,
    http: options.http ?? webhook.http_server,
    instance,
    logger,
    hooks,
    now,
    elapsed,
    clock,
    system,
    registry: routes.registry,
    profiles,
    groups,
    seen: idempotency.seen,
    coalescer: coalescing.coalescer,
    heldGroups: state.heldGroupsOf(coalescing.coalescer, (name) => routes.registry.lookup(name)),
    cron: cron.scheduler,
    enqueueRun: redis === undefined ? journaledEnqueue : (event) => redis.enqueueRun(event),
    shared:
      redis === undefined
        ? undefined
        : {
            limiter: redis.limiter,
            checkAndAdd: (key) => redis.seen.checkAndAdd(key),
            keep: (key) => redis.seen.keep(key),
            forget: (key) => void redis.seen.forget(key),
            coalesce: (event) => redis.coalesce(event),
            directDeliveries: {
              begin: (key) => redis.seen.delivering(key),
              delivered: (key) => redis.seen.delivered(key),
              stopped: (key) => redis.seen.stopped(key),
              elsewhere: (key) => redis.seen.deliveredElsewhere(key),
            },
          },
    deliverDirect: idempotency.underway(
      state.deliverDirect((event) => deliveries.deliverDirect(event, hooks.onDeliveryFailed)),
    ),
    ...(options.eventModes === undefined ? {} : { eventModes: options.eventModes }),
  }).catch(async (err: unknown) => {
    await letGo();
    throw err;
  });
  // With Redis the file is the local backend's: left for a switch back (its ids were carried over above).
  if (redis === undefined) idempotency.start();
  removeStaleStoreTempFiles(paths.home);
  // A route (or the cron jobs) offered more tools than `openai` takes: said once the servers' tools are in.
  const toolCap = toolCapWatch((line) => logger.warn(line));
  toolCap.reloaded(config);
  // Aborted as the stop begins: a sampling request it ends is said ended by the stop.
  const stopBegan = new AbortController();
  const mcp = createMcp({
    config,
    paths,
    logger,
    system,
    agent,
    clock,
    metrics,
    groups,
    stopping: stopBegan.signal,
    onStatus: (hub) => toolCap.check(hub.tools()),
    ...env,
  });
  mcpStates = () => mcp.hub.gaugeStates();
  agent.attachMcp((profile) => mcp.hubFor(profile), mcp.sentCredentials);
  /**
   * With the adapter off, the subscriptions and config.yaml routes no listener serves. Subscriptions shared
   * in Redis are served by the instances whose adapter is on: a worker instance says so at INFO.
   */
  const sayUnserved = (current: LoadedConfig) => {
    const reason = webhookOffReason(current);
    const how = howToEnableWebhook(current);
    const shared = config.state.backend === "redis";
    const subscriptions = unservedSubscriptionsWarning(
      dynamic.enabledNames(),
      dynamic.where,
      reason,
      how,
      shared,
    );
    if (subscriptions !== undefined) logger[shared ? "info" : "warn"](subscriptions);
    const own = unservedRoutesWarning(
      Object.keys(current.config.platforms.webhook.routes),
      paths.config,
      reason,
      how,
      shared,
    );
    if (own !== undefined) logger[shared ? "info" : "warn"](own);
  };
  const proxy = proxyNotice();
  if (proxy !== undefined) logger[proxy.level](`[gateway] ${proxy.text}`);
  for (const problem of caFileProblems()) logger.warn(`[gateway] ${caFileWarning(problem)}`);
  if (webhook.enabled) {
    logger.info(
      `[webhook] Listening on ${listenAddress(host, ingress.port)} — routes: ${describeRoutes(routes.registry.names())}`,
    );
    // An enabled subscription left out of it (no secret at all) is named at WARN by each load of the store.
    if (routes.registry.names().length === 0) hooks.printHowToAddRoute(paths.config, paths.env);
    const exposed = allInterfacesWarning(
      host,
      ingress.port,
      options.host === undefined ? settingKey(webhook, "host") : "--host",
    );
    if (exposed !== undefined) logger.warn(exposed);
    const noMetrics = metricsNotServedNotice(webhook, host);
    if (noMetrics !== undefined) logger.info(noMetrics);
  } else {
    logger.warn(
      `[webhook] Adapter disabled (${webhookOffReason(loaded)}); running ${config.state.backend === "redis" ? "the shared queue's runs (state.backend: redis), " : ""}MCP servers and cron jobs only. ${howToEnable}`,
    );
    sayUnserved(loaded);
  }
  // With redis, the subscriptions webhook_subscriptions.json holds (a switch from local) that Redis does not.
  await sayUnreadSubscriptionFile(dynamic, paths.subscriptions, logger);
  // A stop signal came during the start (as the listener opened): the stop follows it at once, and a run
  // started now (a job taken, a saved run queued, a cron job due) would be left to it, or run twice.
  const stopsAtOnce = () => options.stopping?.aborted === true;
  if (!stopsAtOnce()) redis?.start();
  if (redis !== undefined)
    await storeSavedRuns(
      paths.pendingRuns,
      (run) => redis.enqueueRun({ ...run, payload: {}, headers: {} }),
      (name) => routes.registry.lookup(name),
      hooks,
      state.store.owedByLocalJournal,
      () => new Set(dynamic.disabledNames()),
    );
  else if (stopsAtOnce()) {
    // The saved runs stay in the journal (or webhook-pending-runs.json), for the next start.
  } else if (state.store.backend === "memory")
    resumeSavedRuns(paths.pendingRuns, queue, (name) => routes.registry.lookup(name), hooks);
  else
    await state.resume({
      stopping: stopsAtOnce,
      resumeRuns: (runs) => queue.resume(runs),
      coalescer: coalescing.coalescer,
      lookup: (name) => routes.registry.lookup(name),
      pendingRunsFile: paths.pendingRuns,
      onPendingUnreadable: hooks.onPendingUnreadable,
      onPendingEntriesKept: hooks.onPendingEntriesKept,
      onKept: (runs, groups) =>
        hooks.onRunsKept(
          runs,
          `the journal (${stateDir(paths.home)})`,
          (name) => routes.registry.lookup(name)?.profile,
          groups,
          () => new Set(dynamic.disabledNames()),
        ),
    });
  if (!stopsAtOnce() && !takenOver()) cron.start();

  /** A stopped agent gets SIGTERM, then SIGKILL after 2 s (src/io/process.ts): wait a little past that. */
  const AGENT_KILL_GRACE_MS = 3000;
  const stopSteps = (): StopStep[] => {
    const drainMs = options.drainTimeoutMs ?? loaded.config.gateway.drain_timeout_seconds * 1000;
    // The drain's deadline counts from the stop's start: requests still being answered (a route script)
    // take their time out of it, so the stop still ends within the drain plus its own steps.
    const deadline = new AbortController();
    let began = 0;
    let over: Promise<void> = Promise.resolve();
    const drainLeft = () => Math.max(0, drainMs - (clock.elapsed() - began));
    let waiting: ReturnType<typeof queue.takeWaiting> = [];
    let stopped: ReturnType<typeof queue.stopActive> = [];
    const save = queue.shutdownSaver();
    /**
     * Before waiting for anything (a script may run for script_timeout_seconds): a supervisor that kills
     * sooner than the drain (`docker stop` sends SIGKILL after 10 s) then loses no accepted run, pending
     * coalescing group or remembered delivery id; runs finished meanwhile run again (at-least-once).
     */
    const checkpoint = (onlyWhenNew: boolean) => {
      idempotency.save();
      // Taken over: the other gateway replayed the journal and runs them; saved, the next start would again.
      if (takenOver()) return;
      try {
        save([...queue.unfinished(), ...coalescing.coalescer.pendingEvents()], { onlyWhenNew });
      } catch {
        // The final save reports the problem.
      }
    };
    return [
      // Intake closes at once; requests still in the pipeline (a script, a direct delivery) are answered.
      // When the stop began: an agent its signal ended meanwhile is kept, not failed (`RunQueue.stopNear`).
      {
        name: "mark the stop's start",
        run: () => {
          queue.queue.beginStop();
          stopBegan.abort();
        },
      },
      {
        name: "start the drain's deadline",
        run: () => {
          began = clock.elapsed();
          over = clock.sleep(drainMs, deadline.signal).catch(() => {});
        },
      },
      { name: "close intake", run: () => ingress.closeIntake() },
      // A direct delivery waiting its turn (up to 10 s) ends now, its sender answered 503; one whose request
      // is under way is answered below, within the drain.
      { name: "end direct deliveries' waits", run: () => deliveries.stop() },
      { name: "stop cron schedule", run: () => cron.stop() },
      { name: "checkpoint", run: () => checkpoint(false) },
      {
        name: "answer requests in flight",
        // A direct delivery whose request is still under way at the drain's deadline is cut short there
        // (its platform's timeout_seconds may be far longer), its sender answered 503 as above.
        run: async () => {
          const answered = ingress.drained();
          if (await Promise.race([answered.then(() => true), over.then(() => false)])) return;
          deliveries.cutShort();
          await answered;
        },
      },
      // A direct delivery is answered before its session mirror is written (the sender is waiting).
      { name: "write direct deliveries' session mirrors", run: () => deliveries.mirrorsDone() },
      // The groups fire once the pipeline is empty, so a late event still joins its group.
      { name: "flush coalescing groups", run: () => coalescing.flush() },
      // With what the requests answered meanwhile accepted, coalesced or remembered.
      { name: "checkpoint again", run: () => checkpoint(true) },
      // Runs waiting in Redis stay there for the other instances (or this one's restart).
      { name: "stop the shared queue's workers", run: () => redis?.stop(drainLeft()) },
      { name: "stop following dynamic subscriptions", run: () => dynamic.close() },
      {
        name: "drain runs and cron jobs",
        // One drain for both (gateway.drain_timeout_seconds): the queue's runs and the scheduled cron runs
        // finish within it together; a cron run's wait does not start when the runs' wait is over, which
        // made a stop with both under way take twice the setting (past a supervisor's kill timeout).
        // Past it no waiting run starts any more, and the runs still going are stopped, their agents with
        // them (no agent outlives the gateway), before they are saved: a run that ended after the save,
        // once the journal was closed, delivered its reply and ran again at the next start.
        run: async () => {
          const [drained] = await Promise.all([
            Promise.race([queue.drain(drainLeft()), over.then(() => false)]),
            Promise.race([cron.scheduler.idle(), over]),
          ]);
          deadline.abort();
          if (!drained) {
            waiting = queue.takeWaiting();
            stopped = queue.stopActive();
          }
          cron.scheduler.abortRuns();
          const after = new AbortController();
          await Promise.all([
            drained ? undefined : queue.drain(AGENT_KILL_GRACE_MS),
            Promise.race([
              cron.scheduler.idle(),
              clock.sleep(AGENT_KILL_GRACE_MS, after.signal).catch(() => {}),
            ]),
          ]);
          after.abort();
        },
      },
      // A scheduled run that ended in the drain has given back the due time it held (Redis): now unused.
      { name: "close the shared state's connection", run: () => redis?.disconnect() },
      { name: "stop MCP servers", run: () => mcp.stop() },
      { name: "close the command runs' MCP endpoint", run: () => agent.stop() },
      {
        name: "save unfinished runs",
        run: () => {
          // Not a stopped run that ended all the same (its reply or notice delivered as the stop came).
          const unfinished = [...new Set([...queue.stillUnfinished(stopped), ...queue.active(), ...waiting])];
          if (takenOver()) {
            if (unfinished.length > 0)
              logger.info(
                `[state] ${unfinished.length} unfinished run(s) not saved to ${paths.pendingRuns}: another gateway took the state directory over and runs them from the journal it replayed`,
              );
            return;
          }
          // A run stopped while its reply went out keeps that reply, and where its delivery stood, in the
          // journal too (which the next start reads first), not only in the file.
          state.keepDeliveries(unfinished, (run) => queue.queue.keptDelivery(run));
          try {
            save(unfinished);
            if (unfinished.length > 0) hooks.onRunsSaved(unfinished, paths.pendingRuns);
          } catch (err) {
            const journal = state.store.backend === "local" ? stateDir(paths.home) : undefined;
            hooks.onRunsLost(unfinished, paths.pendingRuns, err, journal);
          }
        },
      },
      // Until here a request on an open connection was answered 503, not reset (ingress threads too).
      { name: "close connections", run: () => ingress.closeConnections() },
      { name: "close run journals", run: async () => void (await profiles.closeJournals()) },
      { name: "close the delivery history", run: () => history?.close() },
      { name: "close the state journal", run: () => state.close() },
      { name: "stop actors", run: () => system.shutdown() },
    ];
  };

  /**
   * Whether a named profile keeps its MCP connections after a reload: a route or subscription bound to
   * it, or a job in its cron store, keeps them; else they close once no run of it waits or runs.
   */
  const profileUse = (profile: string): ProfileUse => {
    if (routes.registry.routes().some((route) => route.profile === profile)) return "bound";
    if (profileHasCronJobs(paths.home, profile)) return "bound";
    return queue.unfinished().some((run) => run.profile === profile) ? "busy" : "unused";
  };

  let stopping: Promise<void> | undefined;
  return {
    host,
    port: ingress.port,
    instance,
    stateBackend: config.state.backend,
    deliveryHistory: history !== undefined,
    drainTimeoutSeconds: () =>
      options.drainTimeoutMs === undefined
        ? loaded.config.gateway.drain_timeout_seconds
        : options.drainTimeoutMs / 1000,
    routes: () => routes.registry.names(),
    metrics,
    reload() {
      // Judged against the address actually bound (a host change waits for a restart): a config that
      // moves to 127.0.0.1 with INSECURE_NO_AUTH must not open routes on a public listener.
      let next: LoadedConfig;
      try {
        // A .env emptied mid-save: applied, every ${VAR} it gave would fall back at once. Said before the
        // load, which would otherwise refuse the first value it misses (a route's secret) as if unset.
        const emptiedEnv = emptiedEnvProblem(paths.env, Object.keys(loaded.scope.secrets).length);
        if (emptiedEnv !== undefined) throw new SvcError("startup_refused", emptiedEnv);
        next = checkedConfig(
          { ...options, host },
          loaded.fromFile,
          options.host === undefined ? listeningOn : undefined,
        );
        if (loaded.fromFile && !next.fromFile) {
          // Moved or deleted (or mid-save by an editor): the embedded default would drop every route.
          throw new SvcError(
            "startup_refused",
            `${paths.config}: not found — the running config came from this file: restore it and reload again`,
          );
        }
        // A running config.yaml with no setting in it may be reloaded as one.
        if (loaded.fromFile && !loaded.blank && next.blank) {
          // Truncated by an editor that writes in place: applied, it would drop every route and server.
          throw new SvcError(
            "startup_refused",
            `${paths.config}: is empty (no setting in it) — the running config came from this file: write it whole and reload again (an editor may still have been writing it)`,
          );
        }
      } catch (err) {
        // `svc mcp reload` waits for the gateway's answer: a refusal is one too, with the reason.
        mcp.reloadRefused(describeError(err));
        throw err;
      }
      // What the running config had and the file no longer has, named: meant, or a file read cut short.
      const removed = reloadRemovals(
        loaded.config,
        next.config,
        paths.config,
        // Read only when multiplexing changes: then every served subscription answers at other URLs.
        loaded.config.gateway.multiplex_profiles === next.config.gateway.multiplex_profiles
          ? []
          : routes.registry.routes().filter((route) => route.dynamic === true),
      );
      if (removed !== undefined) logger.warn(removed);
      // As at start: what the re-read file sets to no effect, or to a value every run or delivery would fail on.
      for (const warning of unusedSettingWarnings(next.config, paths.config)) logger.warn(warning);
      for (const warning of sharedToolPrefixWarnings(next.config.mcp_servers, paths.config))
        logger.warn(`[mcp] ${warning}`);
      for (const warning of homeFileWarnings(paths, next.fromFile, options.env)) logger.warn(warning);
      deliveries.warn(next.config);
      coalescing.flush();
      routes.reload(next.config);
      // Open windows keep their count: a reload must not hand every route a fresh budget.
      ingress.reload(next.config);
      agent.reload(next.config, next.scope.secrets);
      deliveries.reload(next.config);
      const overridden = new Set([
        ...(options.host === undefined ? [] : ["platforms.webhook.host"]),
        ...(options.port === undefined ? [] : ["platforms.webhook.port"]),
      ]);
      const needRestart = restartOnlyChanges(startedConfig, next.config, overridden);
      if (needRestart.length > 0) {
        logger.warn(
          `[gateway] ${describeRestartKeys(needRestart, [loaded.scope, next.scope], next.written)} changed: this takes effect after a restart`,
        );
      }
      const nextWebhook = next.config.platforms.webhook;
      const exposedAfterRestart =
        options.host === undefined && nextWebhook.enabled && config.platforms.webhook.enabled
          ? allInterfacesAfterRestartWarning(
              nextWebhook.host,
              ingress.port,
              settingKey(nextWebhook, "host"),
              host,
            )
          : undefined;
      if (exposedAfterRestart !== undefined) logger.warn(exposedAfterRestart);
      // Judged as a start with the same command judges it (the file's host, unless --host gave one): a file
      // this gateway runs but no start would (a host moved off loopback, nothing left to run) is said now,
      // not by the restart that fails.
      const atStart = [
        ...startupProblems(next.config, paths.config, options.host),
        ...[nothingToRun(next, () => cronJobsStored(paths.home))].filter((p) => p !== undefined),
      ];
      if (atStart.length > 0)
        logger.warn(
          `[gateway] ${paths.config} was reloaded, but a start refuses it: the next restart fails until it is fixed (svc config check says the same):\n${atStart.join("\n")}`,
        );
      loaded = next;
      // The subscriptions are judged by the config too (a record without a secret by the global one, a
      // record by the config.yaml route of its name): the names() below reads them again, with its log lines.
      dynamic.reloaded();
      void sayUnreadSubscriptionFile(dynamic, paths.subscriptions, logger);
      void followMirrors();
      // Before the reload of the servers: a profile nothing is bound to any more only closes its connections
      // (one report, which svc mcp reload prints), rather than reloading them first.
      mcp.retireProfiles(profileUse);
      profiles.closeJournalsOf((profile) => profileUse(profile) === "unused");
      // Judged once the servers the reload replaces are: until then they count their old tools.
      const judgeToolCap = toolCap.reloading(next.config);
      void mcp.reloadConfig(next.config).then(() => judgeToolCap(mcp.hub.tools()));
      // Without the file the embedded default was re-read: naming the file would say it exists.
      const source = next.fromFile ? paths.config : `the embedded default (no ${paths.config})`;
      if (!webhook.enabled) {
        // No listener was opened at start (a reload cannot open one): no route answers, whatever the file says.
        if (!next.config.platforms.webhook.enabled) sayUnserved(next);
        logger.info(
          `[webhook] Reloaded ${source} — no route answers: the webhook adapter is off (no listener)`,
        );
        return { routes: routes.registry.names() };
      }
      logger.info(`[webhook] Reloaded ${source} — routes: ${describeRoutes(routes.registry.names())}`);
      return { routes: routes.registry.names() };
    },
    stop() {
      stopping ??= runStopSteps(stopSteps());
      return stopping;
    },
  };
}

import {
  createDeliverer,
  type Deliverer,
  type DelivererDeps,
  endedBy,
  partsSent,
} from "../actors/deliver.js";
import type { Clock } from "../clock.js";
import type { SvcPaths } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import { checkTargets } from "../io/targets/check.js";
import { canonicalTarget, shownTarget } from "../io/targets/names.js";
import { createTargets } from "../io/targets/registry.js";
import { targetStartupProblems, targetWarnings } from "../io/targets/validate.js";
import type { AcceptedEvent } from "../streams/context.js";
import { DeliveryStopped } from "../streams/stages/deliver.js";

export interface DeliveriesDeps {
  readonly config: Config;
  readonly paths: SvcPaths;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The gateway's wall clock (`clock.now` unless overridden): dates the session mirrors' entries. */
  readonly now: () => number;
  /**
   * The clock durations are measured on (`clock.elapsed` unless overridden): Discord's bucket resets, the
   * lifetimes of cached access tokens.
   */
  readonly elapsed: () => number;
  readonly env?: NodeJS.ProcessEnv;
  /** Delivery attempts and failures by platform, when `/metrics` is served. */
  readonly metrics?: GatewayMetrics | undefined;
  /** Each delivery's outcome, for the delivery history. */
  readonly onOutcome?: DelivererDeps["onOutcome"];
  /** How the other instances sharing the state are told a delivery's session mirror (`state.backend: redis`). */
  readonly mirrorsElsewhere?: DelivererDeps["mirrorsElsewhere"];
}

export interface Deliveries {
  readonly deliverer: Deliverer;
  /**
   * A direct-mode route's payload to its target; false (logged by `onFailed`) when it failed; rejects with
   * a DeliveryStopped when `stop` ended its wait (nothing was sent), `cutShort` its request under way, or
   * came before it began (nothing was sent).
   */
  deliverDirect(
    event: AcceptedEvent,
    onFailed: (event: AcceptedEvent, err: unknown) => void,
  ): Promise<boolean>;
  /** Resolves once the session mirrors of the direct deliveries already answered have been written. */
  mirrorsDone(): Promise<void>;
  /** Logs the new config's target warnings (first thing a reload does). */
  warn(config: Config): void;
  /** Rebuilds the targets when `platforms.<name>` changed (a new token, a platform enabled). */
  reload(config: Config): void;
  /** The platforms deliveries can go to now (`log` and each enabled one). */
  platforms(): readonly string[];
  /** The config the targets were made from (the last reload's). */
  config(): Config;
  /**
   * The gateway stops: the direct deliveries' waits (their turn behind earlier deliveries to their chat,
   * Discord's rate-limit bucket) end, and those deliveries send nothing. A request under way is answered.
   */
  stop(): void;
  /**
   * The drain's deadline came: the direct deliveries whose requests are still under way end there, each
   * answered 503 as an ended wait is (a platform's `timeout_seconds` must not hold the stop past the drain);
   * one that reaches its delivery later sends nothing, answered 503 as an ended wait.
   */
  cutShort(): void;
}

/** The delivery platforms' settings (all of `platforms` but the webhook adapter), to see whether a reload changed them. */
const platformSettings = (config: Config): string =>
  JSON.stringify({ ...config.platforms, webhook: undefined });

/** The delivery targets and the deliverer (agent-mode retries wait on the gateway's clock). */
export function createDeliveries(deps: DeliveriesDeps): Deliveries {
  const { logger, paths } = deps;
  // A delivery's wait for the earlier ones to its chat, and Discord's for its rate-limit bucket, run on
  // the gateway's clock, as retries do; so do the lifetimes of cached access tokens.
  const targetDeps = {
    logger,
    sleep: deps.clock.sleep,
    elapsed: deps.elapsed,
    now: deps.elapsed,
    ...(deps.env === undefined ? {} : { env: deps.env }),
  };
  const stopping = new AbortController();
  const cut = new AbortController();
  let current = deps.config;
  let targets = createTargets(current, targetDeps);
  const warn = (config: Config) => {
    for (const warning of targetWarnings(targetStartupProblems(config, paths.config))) logger.warn(warning);
  };
  warn(current);
  const deliverer = createDeliverer({
    targets: () => targets,
    logger,
    paths,
    sleep: deps.clock.sleep,
    now: () => new Date(deps.now()),
    metrics: deps.metrics,
    ...(deps.onOutcome === undefined ? {} : { onOutcome: deps.onOutcome }),
    ...(deps.mirrorsElsewhere === undefined ? {} : { mirrorsElsewhere: deps.mirrorsElsewhere }),
  });
  // Credentials checks report each platform's state; they do not hold up the listener.
  const started = targets;
  void checkTargets(started, logger, { current: () => targets === started });
  return {
    deliverer,
    async deliverDirect(event, onFailed) {
      // Its request would be cut before anything went out (a route script that ended past the drain's
      // deadline): nothing was sent, so its sender is answered as one whose wait the stop ended.
      if (cut.signal.aborted) {
        const platform = canonicalTarget(event.route.deliver) ?? shownTarget(event.route.deliver);
        logger.warn(
          {
            route: event.routeName,
            delivery_id: event.deliveryId,
            target: shownTarget(event.route.deliver),
            mode: "direct",
          },
          `[delivery] ${platform}: route ${event.routeName}: not delivered — the gateway stopped before the delivery began, its drain over (nothing sent; not counted as failed)`,
        );
        throw new DeliveryStopped("the drain's deadline came before the delivery began");
      }
      try {
        await deliverer.deliver(
          {
            target: event.route.deliver,
            message: {
              text: event.prompt,
              extra: event.extra,
              written: event.route.deliver_extra,
              unfilled: event.unfilled,
              route: event.routeName,
              deliveryId: event.deliveryId,
              profile: event.profile === "default" ? undefined : event.profile,
            },
            mode: "direct",
            mirrorToSession: event.route.mirror_to_session,
            // The sender waits for the answer (GitHub 10 s); a session index another writer holds must not hold it.
            mirrorAfterwards: true,
            waits: stopping.signal,
          },
          cut.signal,
        );
        return true;
      } catch (err) {
        if (endedBy(err, stopping.signal)) throw stopping.signal.reason;
        // The platform may have taken the request it was sending when cut (its answer never came).
        if (cut.signal.aborted)
          throw new DeliveryStopped(
            "the gateway stopped while the delivery was under way",
            `not delivered — the gateway stopped while the delivery was under way, at the end of its drain (the platform may have taken it)${partsSent(err)}`,
          );
        onFailed(event, err);
        return false;
      }
    },
    mirrorsDone: () => deliverer.mirrorsDone?.() ?? Promise.resolve(),
    warn,
    platforms: () => targets.enabled(),
    config: () => current,
    stop() {
      stopping.abort(new DeliveryStopped("the gateway stopped while the delivery waited"));
    },
    cutShort() {
      cut.abort(new DeliveryStopped("the drain's deadline came while the delivery was under way"));
    },
    reload(config) {
      if (platformSettings(config) !== platformSettings(current)) {
        const rebuilt = createTargets(config, targetDeps);
        targets = rebuilt;
        void checkTargets(rebuilt, logger, { current: () => targets === rebuilt });
      }
      current = config;
    },
  };
}

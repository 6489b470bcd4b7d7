import type { SvcPaths } from "../config/paths.js";
import { describeError } from "../errors.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import {
  type MirrorEntry,
  type MirrorShare,
  mirrorDelivery,
  type ToldMirror,
} from "../io/sessions/mirror.js";
import { canonicalTarget, shownTarget } from "../io/targets/names.js";
import type { TargetRegistry } from "../io/targets/registry.js";
import {
  DEFAULT_RETRY,
  type RetryPolicy,
  realSleep,
  retryingSteps,
  type Sleep,
} from "../io/targets/retry.js";
import {
  DeliveryError,
  type DeliveryMessage,
  type DeliveryReceipt,
  type DeliveryTarget,
  PartlyDeliveredError,
  RecipientsRefusedForNow,
  runOnce,
  type StepRunner,
} from "../io/targets/target.js";
import type { DueRetry, QueuedRun, RunSlot } from "./runs.js";

/** How a reply reaches its route's target. `agent` mode retries transient failures; `direct` does not. */
export interface DeliveryRequest {
  readonly target: string;
  readonly message: DeliveryMessage;
  readonly mode: "agent" | "direct";
  readonly mirrorToSession: boolean;
  /**
   * Resolve once delivered, the session mirror going on after (`mirrorsDone` waits for it): a direct
   * delivery's sender waits for its answer, which the best-effort mirror never changes.
   */
  readonly mirrorAfterwards?: boolean;
  /** The route named in the mirrored entry when not `message.route` (a cron job fired by a webhook route). */
  readonly mirrorRoute?: string;
  /**
   * The event the delivery history records this delivery under when not the message's own route and ID:
   * a cron job fired by a webhook event delivers for that event's row (`svc webhook deliveries`).
   */
  readonly recordedAs?: HistoryKey;
  /**
   * The run slot the delivering agent run holds (agent mode): before a retry's wait the run hands it back
   * (`slot.release(run)`), and so does one whose turn comes behind a delivery to its recipient that waits to
   * retry (`SendOptions.handBack`), so a target that is down does not hold the slots other routes' runs need.
   */
  readonly slot?: RunSlot | undefined;
  /** The run that holds `slot`. */
  readonly run?: QueuedRun | undefined;
  /**
   * Ends the delivery's waits (its turn behind earlier deliveries to its recipient, a rate-limit bucket) but
   * not a request under way (`SendOptions.waits`): a direct delivery's is the gateway's stop.
   */
  readonly waits?: AbortSignal | undefined;
}

/** What the delivery history files a delivery under. */
export interface HistoryKey {
  readonly route: string;
  readonly deliveryId: string;
}

export interface Deliverer {
  deliver(request: DeliveryRequest, signal?: AbortSignal): Promise<DeliveryReceipt>;
  /** Resolves once the session mirrors of `mirrorAfterwards` deliveries still under way have ended. */
  mirrorsDone?(): Promise<void>;
  /**
   * The session mirror of a delivery another gateway instance made (`state.backend: redis`), written into
   * this instance's session of that chat if it has one. Never rejects: a failure is logged.
   */
  mirrorTold?(mirror: ToldMirror): Promise<void>;
}

export interface DelivererDeps {
  /** The registry, or how to get the current one (a reload may rebuild it from new platform settings). */
  readonly targets: TargetRegistry | (() => TargetRegistry);
  readonly logger: Logger;
  readonly paths: SvcPaths;
  /** Waits between retries; tests inject one that does not sleep. */
  readonly sleep?: Sleep;
  readonly retry?: Partial<RetryPolicy>;
  /** Clock for session timestamps. */
  readonly now?: () => Date;
  /**
   * How the other gateway instances sharing the state are told a delivery's session mirror, once there is
   * a way (`state.backend: redis`, opened after the deliverer); undefined with one instance.
   */
  readonly mirrorsElsewhere?: () => MirrorShare | undefined;
  /** Attempts and failures by platform, when metrics are on. */
  readonly metrics?: Pick<GatewayMetrics, "deliveryAttempt" | "deliveryFailed"> | undefined;
  /** Each delivery's end, for the delivery history. */
  /** `error`: why a failed delivery failed, as its log line says it. */
  readonly onOutcome?: (delivery: HistoryKey, platform: string, ok: boolean, error?: string) => void;
}

/**
 * Whether `err` is `signal`'s abort: its reason itself (a wait on a clock's `sleepOn`, a turn's wait), or
 * the AbortError whose cause it is (`node:timers/promises`).
 */
export function endedBy(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted !== true) return false;
  return err === signal.reason || (err instanceof Error && err.cause === signal.reason);
}

/** `slack: <reason>` once: a target's own errors already start with its name. */
function platformNamed(name: string, reason: string): string {
  return reason.startsWith(`${name}: `) ? reason : `${name}: ${reason}`;
}

/** A delivery's log fields, made only for a line that is written (not once per delivery). */
function deliveryLog(request: DeliveryRequest): Record<string, string> {
  return {
    route: request.message.route,
    delivery_id: request.message.deliveryId,
    target: shownTarget(request.target),
    mode: request.mode,
  };
}

/** Whether the other instances were told a mirror this instance had no session for. */
const toldNote = (told: boolean | undefined) =>
  told === undefined
    ? ""
    : told
      ? " here (told to the other instances)"
      : " here, nor was it told to the other instances (Redis refused the publish or did not answer)";

export function createDeliverer(deps: DelivererDeps): Deliverer {
  const { logger, paths } = deps;
  const registry = typeof deps.targets === "function" ? deps.targets : () => deps.targets as TargetRegistry;
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...deps.retry };
  const sleep = deps.sleep ?? realSleep;
  /** The mirrors of deliveries that did not wait for theirs (`mirrorAfterwards`), until they end. */
  const mirrorsUnderway = new Set<Promise<void>>();

  /**
   * Writes `entry` into this instance's session of its chat: false when it has none, undefined when the
   * write failed (logged). Never rejects.
   */
  async function mirrorHere(
    entry: MirrorEntry,
    log: Record<string, string>,
    failure: string,
    now: (() => Date) | undefined,
  ): Promise<boolean | undefined> {
    try {
      return await mirrorDelivery({ home: paths.home, ...entry }, now);
    } catch (err) {
      logger.warn(log, `[delivery] mirror_to_session failed (${failure}): ${describeError(err)}`);
      return undefined;
    }
  }

  async function mirror(
    target: DeliveryTarget,
    request: DeliveryRequest,
    receipt: DeliveryReceipt,
  ): Promise<void> {
    const { message } = request;
    const log = { route: message.route, delivery_id: message.deliveryId, target: target.name };
    if (target.chat !== true || receipt.chatId === undefined) {
      logger.debug(log, `[delivery] mirror_to_session skipped: ${target.name} is not a chat target`);
      return;
    }
    const entry: MirrorEntry = {
      profile: message.profile,
      platform: target.name,
      chatId: receipt.chatId,
      route: request.mirrorRoute ?? message.route,
      text: message.text,
    };
    // The other instances sharing the state may hold the chat's session (their chat front end's): told
    // at the same time, each writes it into its own, as this one does here.
    const elsewhere = deps.mirrorsElsewhere?.();
    // Told, the entry has one time in every home: when the delivery ended, by this instance's clock.
    const at = elsewhere === undefined ? undefined : (deps.now?.() ?? new Date());
    const [mirrored, told] = await Promise.all([
      mirrorHere(entry, log, "the delivery itself succeeded", at === undefined ? deps.now : () => at),
      at === undefined ? undefined : elsewhere?.tell({ ...entry, at: at.toISOString() }),
    ]);
    if (mirrored === false)
      logger.debug(
        log,
        `[delivery] mirror_to_session skipped: ${target.name} chat ${receipt.chatId} has no session${toldNote(told)}`,
      );
  }

  const now = () => deps.now?.().getTime() ?? Date.now();

  /**
   * The rest of the wait for a retry another instance handed on (its stop cut the wait short; a killed
   * one's lease ran out; a stop saved it with the run), out of the run's slot as that instance's was, and in
   * the recipient's turn (the send's first step runs it). Never longer than a delivery waits
   * for a retry: a due time that far ahead is another machine's clock running ahead.
   */
  async function waitForResumed(
    request: DeliveryRequest,
    platform: string,
    retry: DueRetry,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    // Read in the recipient's turn (a round trip to Redis): a delivery to it taken meanwhile queues behind.
    const dueAt = request.slot?.dueHere === undefined ? retry.dueAt : await request.slot.dueHere();
    const due = dueAt === retry.dueAt ? retry : { ...retry, dueAt };
    const ms = Math.min(due.dueAt - now(), policy.maxRetryAfterMs);
    const where = `${partsNote(retry.partsDelivered ?? 0)}${recipientsNote(retry.recipients)}`;
    if (ms <= 0) {
      // Due already (handed on as it sent the parts after a retry that went through, or taken over late).
      if (where !== "")
        logger.info(
          deliveryLog(request),
          `[delivery] ${platform}: route ${request.message.route}: handed on — goes on now${where}`,
        );
      return;
    }
    logger.info(
      deliveryLog(request),
      `[delivery] ${platform}: route ${request.message.route}: handed on waiting to retry — retry ${retry.attempts}/${policy.retries} in ${ms} ms${where}`,
    );
    if (request.slot !== undefined && request.run !== undefined) await request.slot.release(request.run, due);
    await sleep(ms, signal);
  }

  return {
    async deliver(request, signal) {
      const { message } = request;
      const target = registry().get(request.target);
      if (target === undefined) {
        const canonical = canonicalTarget(request.target);
        const platform = canonical ?? request.target;
        const named = platform === request.target ? `"${platform}"` : `"${request.target}" (${platform})`;
        const error = new DeliveryError(
          canonical === undefined
            ? // Only a subscription written by hand can name one (the CLI and config.yaml refuse it).
              `delivery target "${shownTarget(request.target)}" is not a delivery target — set the route's deliver to one (see docs/delivery-targets.md)`
            : `delivery target ${named} is not enabled — set platforms.${platform}.enabled: true with its credentials`,
          false,
        );
        logger.error(deliveryLog(request), `[delivery] route ${message.route}: ${error.message}`);
        // Counted as a failed delivery: the alert on delivery failures covers a target left disabled. A
        // name that is no target is counted as `(unknown)`, not under its text: a label value is never
        // taken from a record written by hand (which may hold a chat's incoming-webhook URL, a credential).
        deps.metrics?.deliveryFailed(canonical ?? "(unknown)");
        // By its platform (telegram, not chat_1), as the history names a delivery to an enabled target. A
        // name that is no target's is recorded as the metrics count it, `(unknown)`, and why without it (a
        // record written by hand may hold a credential there: a chat's incoming-webhook URL).
        deps.onOutcome?.(
          request.recordedAs ?? message,
          canonical ?? "(unknown)",
          false,
          canonical === undefined
            ? "its deliver names no delivery target — set it to one (docs/delivery-targets.md lists them)"
            : error.message,
        );
        throw error;
      }
      const retries = request.mode === "agent" && target.inProcess !== true;
      // Handed on by another instance while it waited to retry: that retry, once due, with the attempts made.
      const stored = retries ? request.slot?.dueRetry : undefined;
      const resumed = stored?.target === undefined || stored.target === target.name ? stored : undefined;
      // A split message's parts that instance delivered: the send starts with the part it retries.
      const fromPart = resumed?.partsDelivered ?? 0;
      // The parts delivered as the run's stored retry says; undefined while none is stored.
      let partsStored = resumed === undefined ? undefined : fromPart;
      const runStep = retries
        ? retryingSteps(
            policy,
            // A retry is counted as an attempt once its wait is over and it is made: one the gateway's
            // stop cuts short while it waits sends nothing. The parts before the one it retries were delivered.
            async (ms, abort, attempts, part, error) => {
              partsStored = part;
              if (request.slot !== undefined && request.run !== undefined)
                await request.slot.release(request.run, {
                  dueAt: now() + ms,
                  attempts,
                  partsDelivered: part,
                  target: target.name,
                  ...(error instanceof RecipientsRefusedForNow ? { recipients: error.recipients } : {}),
                });
              await sleep(ms, abort);
              deps.metrics?.deliveryAttempt(target.name);
            },
            ({ error, retry, delayMs }) => {
              logger.warn(
                deliveryLog(request),
                `[delivery] ${platformNamed(target.name, describeError(error))} — retry ${retry + 1}/${policy.retries} in ${delayMs} ms`,
              );
            },
            signal,
            resumed?.attempts,
            fromPart,
          )
        : runOnce;
      // A resumed delivery waits out its retry's due time in its first step: in its recipient's turn, which
      // it takes first (as a retry's wait inside the send holds it), so a later delivery to the recipient
      // waits behind it rather than going out between its parts.
      let dueWait =
        resumed === undefined ? undefined : () => waitForResumed(request, target.name, resumed, signal);
      const firstWaits: StepRunner =
        dueWait === undefined
          ? runStep
          : async (step, part) => {
              const wait = dueWait;
              dueWait = undefined;
              if (wait !== undefined) {
                await wait();
                deps.metrics?.deliveryAttempt(target.name);
              }
              return runStep(step, part);
            };
      const slot = retries ? request.slot : undefined;
      const keepRetry =
        slot?.keepRetry === undefined ? undefined : (due: DueRetry) => slot.keepRetry?.(due, request.run);
      // A slot of this process keeps it in memory: told of each later part, also before any retry.
      if (slot?.keepsEachPart === true) partsStored ??= 0;
      // Once a retry is stored, each later part's send stores first that the parts before it went out (one
      // write a part): an instance stopped or killed meanwhile leaves the next to send from that part on.
      const sendStep: StepRunner =
        keepRetry === undefined
          ? firstWaits
          : async (step, part = 0) => {
              if (partsStored !== undefined && part > partsStored) {
                partsStored = part;
                await keepRetry({ dueAt: now(), attempts: 0, partsDelivered: part, target: target.name });
              }
              return firstWaits(step, part);
            };
      let receipt: DeliveryReceipt;
      try {
        // A resumed one's attempt is counted once its wait is over (`firstWaits`).
        if (resumed === undefined) deps.metrics?.deliveryAttempt(target.name);
        // One that neither waits nor retries (`log`): no options object per delivery.
        receipt = await (target.inProcess === true
          ? target.send(message, signal)
          : target.send(message, signal, {
              runStep: sendStep,
              waits: request.waits,
              fromPart,
              resumesRetry: resumed !== undefined,
              inLine: slot?.inLine,
              recipients: resumed?.recipients,
              handsOn: keepRetry !== undefined && slot?.handsOn !== false,
              // Its turn behind a delivery to the same recipient that waits to retry: the slot goes back too.
              handBack:
                request.mode === "agent" && request.slot !== undefined && request.run !== undefined
                  ? handBack(request.slot, request.run)
                  : undefined,
            }));
      } catch (err) {
        // Cut short by the gateway's stop (waiting to retry, a request under way): the target did not fail,
        // and the run did not finish (a webhook event's stopped run runs again), so it is neither counted nor recorded as a
        // failed delivery. Nor is a direct delivery whose wait the stop ended, or whose request the drain's
        // deadline cut (its sender is answered 503): a split one's line says which parts went out before.
        if (signal?.aborted === true || endedBy(err, request.waits)) {
          const parts = request.mode === "direct" ? partsSent(err) : "";
          logger.warn(
            deliveryLog(request),
            `[delivery] ${target.name}: route ${message.route}: not delivered — the gateway stopped while the delivery was under way (not counted as failed)${parts}`,
          );
          throw err;
        }
        deps.metrics?.deliveryFailed(target.name);
        deps.onOutcome?.(request.recordedAs ?? message, target.name, false, describeError(err));
        logger.error(
          deliveryLog(request),
          `[delivery] ${target.name} failed for route ${message.route}: ${describeError(err)}`,
        );
        throw err;
      }
      deps.onOutcome?.(request.recordedAs ?? message, target.name, true);
      if (target.name !== "log")
        logger.info(deliveryLog(request), `[delivery] ${target.name}: delivered for route ${message.route}`);
      if (request.mirrorToSession && request.mirrorAfterwards === true) {
        // Never rejects: a failure is logged (the delivery itself succeeded).
        const underway = mirror(target, request, receipt).finally(() => mirrorsUnderway.delete(underway));
        mirrorsUnderway.add(underway);
      } else if (request.mirrorToSession) await mirror(target, request, receipt);
      return receipt;
    },
    async mirrorsDone() {
      while (mirrorsUnderway.size > 0) await Promise.all([...mirrorsUnderway]);
    },
    async mirrorTold(told) {
      const { at, ...entry } = told;
      const log = { route: entry.route, target: entry.platform };
      // Dated as delivered, on the instance that delivered it.
      await mirrorHere(entry, log, "told by the instance that delivered it", () => new Date(at));
    },
  };
}

/** ` (part 3 of 5; parts 1-2 were delivered)` for a split message cut short after its first parts, else "". */
export function partsSent(err: unknown): string {
  return err instanceof PartlyDeliveredError ? err.partsNote : "";
}

/** What a handed-on retry's log line adds when parts of its message were delivered before it. */
function partsNote(delivered: number): string {
  if (delivered === 0) return "";
  return ` (part ${delivered + 1}; part${delivered === 1 ? " 1 was" : `s 1-${delivered} were`} delivered)`;
}

/** What a handed-on retry's log line adds when it goes to some of the message's recipients alone. */
function recipientsNote(recipients: readonly string[] | undefined): string {
  if (recipients === undefined || recipients.length === 0) return "";
  return ` (to ${recipients.join(", ")} alone; the other recipients got it)`;
}

/** Hands `run`'s slot back (`RunSlot.release`): its delivery waits its turn behind one that waits to retry. */
function handBack(slot: RunSlot, run: QueuedRun): () => boolean | Promise<boolean> {
  return () => slot.release(run);
}

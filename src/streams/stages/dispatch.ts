import type { AcceptedEvent, Coalesced, CronFireResult, EventModes, PipelineCtx } from "../context.js";
import { UNNAMED_EVENT } from "../eventType.js";
import { isPromise, type MaybePromise } from "../stateUnavailable.js";
import { AcceptedBody, isOutcome, type Outcome, outcome, unavailableOutcome } from "../types.js";
import { acceptedOf } from "./accept.js";
import { seenKey } from "./idempotency.js";
import type { MaybeAsyncStage } from "./maybeAsync.js";

export const QUEUE_FULL = unavailableOutcome("Agent run queue is full, retry later");

export interface DispatchDeps {
  readonly modes: EventModes;
  /**
   * Puts an agent run on the queue; false when the waiting list is at its cap. In memory it returns at
   * once; a shared queue (Redis) resolves once the run is stored, and rejects when it could not be.
   */
  enqueueRun(event: AcceptedEvent): MaybePromise<boolean>;
  /** Forgets a recorded delivery id (a 503 must not make the sender's retry a duplicate). */
  forget(key: string): void;
  /**
   * An event answered 202 then 503 after all (its record not durable): a group that took it no longer counts
   * it, and a key that remembered its run forgets it (`Coalescer.withdraw`).
   */
  withdraw?(event: AcceptedEvent): void;
  /** An event answered 202 whose record is durable: a key that remembered its run keeps it (`Coalescer.kept`). */
  kept?(event: AcceptedEvent): void;
  /**
   * A direct delivery of `key` begins (the deliver stage ends it). True when the store keeps the id itself
   * from here (a shared store: pending while the delivery runs, its hour once delivered), so `keep` must not.
   */
  beginDirect?(key: string): boolean;
  /**
   * A shared store (Redis) records a delivery id as pending, for a short while, until what the id stands
   * for is stored: `keep` then makes it last its hour. An instance that dies in between leaves no id that
   * would answer the sender's retry `duplicate` for an event nobody stored.
   */
  keep?(key: string): Promise<void>;
  onCronUnavailable?: (event: AcceptedEvent) => void;
  onCoalesceUnavailable?: (event: AcceptedEvent) => void;
  /**
   * A reload flushes every pending group (groups in memory; shared ones in Redis keep their route's
   * settings): an event whose route the reload retired while the event was in the pipeline (in its script)
   * is then not grouped, since its group would keep the replaced route's windows past the reload.
   */
  readonly reloadFlushesGroups?: boolean;
  /** Coalescing groups held since the start until their route is back (the local journal's). */
  readonly heldGroups?: HeldGroups;
}

/**
 * The saved coalescing groups a start held because their route was gone. None on nearly every start: the
 * stage then reads `size` and looks no further.
 */
export interface HeldGroups {
  readonly size: number;
  /**
   * Called with each event of a route before it is dispatched, whatever the route's mode: the groups held
   * for that route, once it is back, are reopened — their run queued now where the route no longer
   * coalesces — so the older events never run after this newer one.
   */
  release(routeName: string): void;
}

/**
 * 202 accepted, the documented shape, for agent runs and cron_job fires alike (the job is named in
 * the log line, not in the answer: a sender or tester matching the documented body sees no extra key).
 */
export function acceptedOutcome(event: AcceptedEvent): Outcome {
  return outcome(202, new AcceptedBody(event.routeName, event.event ?? UNNAMED_EVENT, event.deliveryId));
}

/**
 * Step 9 of the processing order (docs/webhook.md), the synchronous modes: cron job fire, coalescing, agent run (all 202 at once).
 * `deliver_only` routes pass through to the direct-delivery stage.
 */
export function dispatchStage(deps: DispatchDeps): MaybeAsyncStage {
  const enqueued = (event: AcceptedEvent, ok: boolean) =>
    ok ? acceptedOutcome(event) : queueFull(deps, event);
  const fired = (event: AcceptedEvent, result: CronFireResult) =>
    result === "queue_full"
      ? queueFull(deps, event)
      : result === "unreadable"
        ? refused(deps, event, CRON_STORE_UNREADABLE)
        : typeof result === "object"
          ? { ...acceptedOutcome(event), reason: result.skipped }
          : acceptedOutcome(event);
  const agentRun = (ctx: PipelineCtx, event: AcceptedEvent): MaybePromise<PipelineCtx | Outcome> => {
    if (event.route.deliver_only) {
      const key = seenKey(event.routeName, event.deliveryId);
      // A direct delivery may take minutes (retries): its id lasts its hour from now. A shared store that
      // tracks direct deliveries keeps it pending instead until the delivery ends (delivered: the hour); it
      // is not given its hour first, or another instance looking in between would take the event for one
      // handled and answer its duplicate `duplicate` even when this delivery then fails.
      if (deps.beginDirect?.(key) !== true) void deps.keep?.(key);
      return ctx;
    }
    const ok = deps.enqueueRun(event);
    return isPromise(ok)
      ? unkept(
          deps,
          event,
          ok.then((taken) => enqueued(event, taken)),
        )
      : enqueued(event, ok);
  };
  const held = deps.heldGroups;
  return (ctx) => {
    if (ctx.duplicateOf !== undefined) return ctx; // answered by the deliver stage
    const event = acceptedOf(ctx);
    const { route } = event;
    if (held !== undefined && held.size > 0) held.release(event.routeName);
    if (route.cron_job !== undefined) {
      if (deps.modes.fireCronJob === undefined) {
        deps.onCronUnavailable?.(event);
        return keptAt(deps, event, acceptedOutcome(event));
      }
      const result = deps.modes.fireCronJob(route.cron_job, event);
      return isPromise(result)
        ? unkept(
            deps,
            event,
            result.then((r) => fired(event, r)),
          )
        : keptAt(deps, event, fired(event, result));
    }
    // Retired: the reload flushed the groups of the table that resolved it; it runs at once, as they did,
    // unless a group of the reloaded route takes it in, or a run of its key dispatched since it was received
    // (a group's, or another retired event's run at once) was of an event received after it.
    const retired = deps.reloadFlushesGroups === true && ctx.route?.standing?.retired === true;
    if (route.coalesce !== undefined && retired) {
      const grouped = deps.modes.coalesceRetired?.(event) ?? "not_grouped";
      if (grouped !== "not_grouped") return groupedOutcome(event, grouped);
      // Its key remembers it once the queue has taken its run (in this turn: no other event is judged by a
      // memory of a run that may yet be refused); one answered 503 (queue full) supersedes nothing.
      const queued = deps.modes.retiredQueued;
      const ran = agentRun(ctx, event);
      if (queued === undefined) return ran;
      const taken = (answer: PipelineCtx | Outcome) => {
        if (isOutcome(answer) && answer.status === 202) queued(event);
        return answer;
      };
      return isPromise(ran) ? ran.then(taken) : taken(ran);
    } else if (route.coalesce !== undefined) {
      if (deps.modes.coalesce === undefined) deps.onCoalesceUnavailable?.(event);
      else {
        const grouped = deps.modes.coalesce(event);
        if (isPromise(grouped)) {
          return unkept(
            deps,
            event,
            grouped.then((g) => (g === "not_grouped" ? agentRun(ctx, event) : groupedOutcome(event, g))),
          );
        }
        if (grouped !== "not_grouped") return groupedOutcome(event, grouped);
      }
    }
    return agentRun(ctx, event);
  };
}

const COALESCED_BODY = { status: "coalesced" } as const;

/**
 * 202 coalesced, the documented body (`status` only). The event's delivery ID (the sender's, or the one
 * the gateway made) is kept aside for the access log and the delivery history, as a failed direct
 * delivery's is: without it an event whose sender sent no ID was recorded as `-`, so the group's run
 * (made under the latest event's ID) showed on no row and the event could not be redelivered. Its
 * event type is kept aside too: one the body named (`event_type`) was recorded as none.
 */
function coalescedOutcome(event: AcceptedEvent): Outcome {
  return event.event === undefined
    ? { status: 202, body: COALESCED_BODY, deliveryId: event.deliveryId }
    : { status: 202, body: COALESCED_BODY, deliveryId: event.deliveryId, event: event.event };
}

/**
 * The delivery history's reason of an event a run already dispatched superseded (`Superseded`), before that
 * run's delivery id in parentheses: `svc webhook deliveries` tells it from an event that joined a group.
 */
export const SUPERSEDED_REASON = "superseded by a run already dispatched";

/** 202 coalesced, for an event superseded by the run of `by`: said in the delivery history. */
function supersededOutcome(event: AcceptedEvent, by: string): Outcome {
  return { ...coalescedOutcome(event), reason: `${SUPERSEDED_REASON} (${by})` };
}

function groupedOutcome(event: AcceptedEvent, grouped: Exclude<Coalesced, "not_grouped">): Outcome {
  return grouped === "coalesced" ? coalescedOutcome(event) : supersededOutcome(event, grouped.supersededBy);
}

const CRON_STORE_UNREADABLE = unavailableOutcome("Cron job store cannot be read, retry later");

function queueFull(deps: DispatchDeps, event: AcceptedEvent): Outcome {
  return refused(deps, event, QUEUE_FULL);
}

/** A 503 whose event was not stored: its id is forgotten, so the sender's retry is taken. */
function refused(deps: DispatchDeps, event: AcceptedEvent, answer: Outcome): Outcome {
  void deps.forget(seenKey(event.routeName, event.deliveryId));
  return answer;
}

/** A 202 (its event stored, or a cron fire skipped with nothing to store): the id lasts its hour. */
function keptAt(deps: DispatchDeps, event: AcceptedEvent, answer: Outcome): Outcome {
  if (deps.keep !== undefined && answer.status === 202)
    void deps.keep(seenKey(event.routeName, event.deliveryId));
  return answer;
}

/**
 * A shared store's answer: once it stored the event (a 202), its id is kept for the hour; when it could not
 * (it rejects), the id is forgotten so the sender's retry runs. The answer does not wait for the keep (one
 * more round trip: 15-20 % of the accepted rate at 32 connections): an instance killed between the two
 * leaves the id for its pending minute, and a retry after it finds the job stored under its id (BullMQ adds
 * no second job with the same id while the first is kept); a coalesced event's id, with no job of its own,
 * got its hour in the same step as its join.
 */
function unkept<T>(deps: DispatchDeps, event: AcceptedEvent, pending: Promise<T>): Promise<T> {
  return pending.then(
    (result) => {
      if (isOutcome(result)) keptAt(deps, event, result);
      return result;
    },
    (err: unknown) => {
      void deps.forget(seenKey(event.routeName, event.deliveryId));
      throw err;
    },
  );
}

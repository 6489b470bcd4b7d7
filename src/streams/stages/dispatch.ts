import type { AcceptedEvent, EventModes, Stage } from "../context.js";
import { type Outcome, outcome, unavailableOutcome } from "../types.js";
import { acceptedOf } from "./accept.js";
import { seenKey } from "./idempotency.js";

export const QUEUE_FULL = unavailableOutcome("Agent run queue is full, retry later");

export interface DispatchDeps {
  readonly modes: EventModes;
  /** Puts an agent run on the queue and returns at once; false when the waiting list is at its cap. */
  enqueueRun(event: AcceptedEvent): boolean;
  /** Forgets a recorded delivery id (a 503 must not make the sender's retry a duplicate). */
  forget(key: string): void;
  /** A direct delivery of `key` begins (the deliver stage ends it). */
  beginDirect?(key: string): void;
  onCronUnavailable?: (event: AcceptedEvent) => void;
  onCoalesceUnavailable?: (event: AcceptedEvent) => void;
}

/**
 * 202 accepted, the documented shape, for agent runs and cron_job fires alike (the job is named in
 * the log line, not in the answer: a sender or tester matching the documented body sees no extra key).
 */
export function acceptedOutcome(event: AcceptedEvent): Outcome {
  return outcome(202, {
    status: "accepted",
    route: event.routeName,
    event: event.event ?? null,
    delivery_id: event.deliveryId,
  });
}

/**
 * Step 9 of the processing order (docs/webhook.md), the synchronous modes: cron job fire, coalescing, agent run (all 202 at once).
 * `deliver_only` routes pass through to the direct-delivery stage.
 */
export function dispatchStage(deps: DispatchDeps): Stage {
  return (ctx) => {
    if (ctx.duplicateOf !== undefined) return ctx; // answered by the deliver stage
    const event = acceptedOf(ctx);
    const { route } = event;
    if (route.cron_job !== undefined) {
      if (deps.modes.fireCronJob === undefined) deps.onCronUnavailable?.(event);
      else if (deps.modes.fireCronJob(route.cron_job, event) === "queue_full") return queueFull(deps, event);
      return acceptedOutcome(event);
    }
    if (route.coalesce !== undefined) {
      if (deps.modes.coalesce === undefined) deps.onCoalesceUnavailable?.(event);
      else if (deps.modes.coalesce(event) === "coalesced") return outcome(202, { status: "coalesced" });
    }
    if (route.deliver_only) {
      deps.beginDirect?.(seenKey(event.routeName, event.deliveryId));
      return ctx;
    }
    if (!deps.enqueueRun(event)) return queueFull(deps, event);
    return acceptedOutcome(event);
  };
}

function queueFull(deps: DispatchDeps, event: AcceptedEvent): Outcome {
  deps.forget(seenKey(event.routeName, event.deliveryId));
  return QUEUE_FULL;
}

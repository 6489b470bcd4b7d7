import type { AcceptedEvent, AsyncStage, EventModes } from "../context.js";
import { type Outcome, errorOutcome, outcome } from "../types.js";
import { acceptEvent } from "./accept.js";
import { seenKey } from "./idempotency.js";

export const DELIVERY_FAILED = errorOutcome(502, "Delivery failed");

export interface DispatchDeps {
  readonly modes: EventModes;
  /** Puts an agent run on the bounded queue; returns at once. */
  enqueueRun(event: AcceptedEvent): void;
  /** Direct delivery (`deliver_only`); resolves false when the target refused (details logged by the callee). */
  deliverDirect(event: AcceptedEvent): Promise<boolean>;
  /** Forgets a recorded delivery id so the sender's retry of a failed direct delivery is processed. */
  forget(key: string): void;
  onCronUnavailable?: (event: AcceptedEvent) => void;
  onCoalesceUnavailable?: (event: AcceptedEvent) => void;
}

export function acceptedOutcome(event: AcceptedEvent): Outcome {
  return outcome(202, { status: "accepted", route: event.routeName, event: event.event ?? null, delivery_id: event.deliveryId });
}

/** Step 9 of spec 4.2: cron job fire, coalescing, direct delivery, or an agent run. */
export function dispatchStage(deps: DispatchDeps): AsyncStage {
  return async (ctx) => {
    const event = acceptEvent(ctx);
    const { route } = event;
    if (route.cron_job !== undefined) {
      if (deps.modes.fireCronJob === undefined) deps.onCronUnavailable?.(event);
      else deps.modes.fireCronJob(route.cron_job, event);
      return acceptedOutcome(event);
    }
    if (route.coalesce !== undefined) {
      if (deps.modes.coalesce === undefined) deps.onCoalesceUnavailable?.(event);
      else if (deps.modes.coalesce(event) === "coalesced") return outcome(202, { status: "coalesced" });
    }
    if (route.deliver_only) {
      if (await deps.deliverDirect(event)) {
        return outcome(200, { status: "delivered", route: event.routeName, target: route.deliver, delivery_id: event.deliveryId });
      }
      deps.forget(seenKey(event.routeName, event.deliveryId));
      return DELIVERY_FAILED;
    }
    deps.enqueueRun(event);
    return acceptedOutcome(event);
  };
}

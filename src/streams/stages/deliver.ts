import type { AcceptedEvent, AsyncStage, PipelineCtx } from "../context.js";
import { errorOutcome, outcome } from "../types.js";
import { acceptedOf } from "./accept.js";
import { seenKey } from "./idempotency.js";

export const DELIVERY_FAILED = errorOutcome(502, "Delivery failed");

export interface DeliverDeps {
  /** Direct delivery; resolves false when the target refused (the callee logs the details). */
  deliverDirect(event: AcceptedEvent): Promise<boolean>;
  /** Forgets a recorded delivery id so the sender's retry of a failed delivery is processed. */
  forget(key: string): void;
}

/** Only `deliver_only` routes reach this stage with no outcome yet. */
export function needsDirectDelivery(ctx: PipelineCtx): boolean {
  return ctx.accepted?.route.deliver_only === true;
}

/** Step 9, direct delivery (no agent): 200 delivered, or 502 with details only in the log. */
export function deliverStage(deps: DeliverDeps): AsyncStage {
  return async (ctx) => {
    const event = acceptedOf(ctx);
    if (await deps.deliverDirect(event)) {
      return outcome(200, {
        status: "delivered",
        route: event.routeName,
        target: event.route.deliver,
        delivery_id: event.deliveryId,
      });
    }
    deps.forget(seenKey(event.routeName, event.deliveryId));
    return DELIVERY_FAILED;
  };
}

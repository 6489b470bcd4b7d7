import type { AcceptedEvent, AsyncStage, PipelineCtx } from "../context.js";
import { SHUTTING_DOWN } from "../frontAnswers.js";
import type { DirectOutcome } from "../idempotencyRecord.js";
import { errorOutcome, withEventAside } from "../types.js";
import { acceptedOf } from "./accept.js";
import { DUPLICATE, seenKey } from "./idempotency.js";

export const DELIVERY_FAILED = errorOutcome(502, "Delivery failed");

/**
 * What `deliverDirect` rejects with when the gateway's stop ended a direct delivery: its wait (nothing was
 * sent), or its request still under way at the drain's deadline. The sender is answered 503 (its id
 * forgotten, so its retry delivers).
 */
export class DeliveryStopped extends Error {
  override readonly name = "DeliveryStopped";
  constructor(
    message: string,
    /** The 503's reason in the delivery history: a request cut short under way has one, an ended wait none. */
    readonly recorded?: string,
  ) {
    super(message);
  }
}

export interface DeliverDeps {
  /**
   * Direct delivery; resolves false when the target refused (the callee logs the details), rejects with a
   * DeliveryStopped when the gateway's stop ended its wait.
   */
  deliverDirect(event: AcceptedEvent): Promise<boolean>;
  /** Forgets a recorded delivery id so the sender's retry of a failed delivery is processed. */
  forget(key: string): void;
  /**
   * The direct delivery of `key` is over (see `IdempotencyRecord`): when given, it forgets a failed key
   * (instead of `forget`) and answers the duplicates that waited (a stopped one 503, as its original).
   */
  endDirect?(key: string, outcome: DirectOutcome): void;
}

/** Only `deliver_only` routes (and duplicates of their deliveries under way) reach this stage with no outcome yet. */
export function needsDirectDelivery(ctx: PipelineCtx): boolean {
  return ctx.duplicateOf !== undefined || ctx.accepted?.route.deliver_only === true;
}

/** Step 9, direct delivery (no agent): 200 delivered, or 502 with details only in the log. */
export function deliverStage(deps: DeliverDeps): AsyncStage {
  return async (ctx) => {
    if (ctx.duplicateOf !== undefined) {
      const original = await ctx.duplicateOf;
      return withEventAside(
        original === true ? DUPLICATE : original === "stopped" ? SHUTTING_DOWN : DELIVERY_FAILED,
        ctx.event,
      );
    }
    const event = acceptedOf(ctx);
    const key = seenKey(event.routeName, event.deliveryId);
    let delivered: DirectOutcome = false;
    let stopped: DeliveryStopped | undefined;
    try {
      delivered = await deps.deliverDirect(event);
    } catch (err) {
      if (!(err instanceof DeliveryStopped)) throw err;
      delivered = "stopped";
      stopped = err;
    } finally {
      if (deps.endDirect !== undefined) deps.endDirect(key, delivered);
      else if (delivered !== true) void deps.forget(key);
    }
    if (delivered === "stopped")
      return withEventAside(
        stopped?.recorded === undefined ? SHUTTING_DOWN : { ...SHUTTING_DOWN, reason: stopped.recorded },
        event.event,
      );
    // The body stays the documented error; the id (generated when the sender sent none) is kept aside,
    // and so is the event type (neither body names it), for the delivery history.
    if (!delivered) return withEventAside({ ...DELIVERY_FAILED, deliveryId: event.deliveryId }, event.event);
    const body = {
      status: "delivered",
      route: event.routeName,
      target: event.route.deliver,
      delivery_id: event.deliveryId,
    };
    return event.event === undefined ? { status: 200, body } : { status: 200, body, event: event.event };
  };
}

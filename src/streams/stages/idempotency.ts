import { type PipelineCtx, withCtx } from "../context.js";
import { deliveryIdHeader, storedDeliveryId } from "../deliveryId.js";
import type { DirectOutcome } from "../idempotencyRecord.js";
import { isPromise, type MaybePromise } from "../stateUnavailable.js";
import { type Outcome, outcome, withEventAside } from "../types.js";
import { unreadableDeliveryId } from "../unreadableDeliveryId.js";
import type { MaybeAsyncStage } from "./maybeAsync.js";
import { routeOf } from "./require.js";

export const DUPLICATE = outcome(200, { status: "duplicate" });

export interface IdempotencyDeps {
  /** Records the key; `true` when it was already recorded (a duplicate). */
  checkAndAdd(key: string): MaybePromise<boolean>;
  randomId(): string;
  /** The outcome of a direct delivery of `key` still under way (see `IdempotencyRecord`: the key is pending). */
  inFlight?(key: string): Promise<DirectOutcome> | undefined;
  /** A duplicate of a direct delivery under way waits for that delivery's outcome (a debug line). */
  onWaitsForOriginal?(routeName: string, deliveryId: string): void;
}

let lastRoute = "";
let lastId = "";
let lastKey = ":";

/**
 * Deliveries are remembered per route: the same id sent to two routes is two events. The last key made is
 * handed out again for the same route and id: the idempotency cache and the journal's live mirror then keep
 * one string for an accepted event, not two (~100 B less kept per accepted request for the hour).
 */
export function seenKey(routeName: string, deliveryId: string): string {
  if (deliveryId !== lastId || routeName !== lastRoute) {
    lastRoute = routeName;
    lastId = deliveryId;
    lastKey = `${routeName}:${deliveryId}`;
  }
  return lastKey;
}

/**
 * Step 8 of the processing order (docs/webhook.md). Runs after filters and script, so an ignored or rejected event is never
 * recorded and its retry is processed normally. A request without a delivery id gets a random one, marked
 * `madeId` and never recorded (no sender can send it again); one whose id is not UTF-8 text is refused
 * (`unreadableDeliveryId`), never recorded.
 */
export function idempotencyStage(deps: IdempotencyDeps): MaybeAsyncStage {
  const decide = (ctx: PipelineCtx, key: string, sent: string, duplicate: boolean): PipelineCtx | Outcome => {
    if (duplicate) {
      const original = deps.inFlight?.(key);
      if (original === undefined) return withEventAside(DUPLICATE, ctx.event);
      deps.onWaitsForOriginal?.(routeOf(ctx).name, sent);
      return withCtx(ctx, { deliveryId: sent, duplicateOf: original });
    }
    return withCtx(ctx, { deliveryId: sent });
  };
  return (ctx) => {
    const route = routeOf(ctx);
    const { headers } = ctx.inbound;
    const header = deliveryIdHeader(headers);
    if (header === undefined) return withCtx(ctx, { deliveryId: deps.randomId(), madeId: true });
    const value = (headers[header] as string).trim();
    const unreadable = unreadableDeliveryId(header, value);
    if (unreadable !== undefined) return withEventAside(unreadable, ctx.event);
    const sent = storedDeliveryId(value);
    const key = seenKey(route.name, sent);
    const duplicate = deps.checkAndAdd(key);
    if (isPromise(duplicate)) return duplicate.then((seen) => decide(ctx, key, sent, seen));
    return decide(ctx, key, sent, duplicate);
  };
}

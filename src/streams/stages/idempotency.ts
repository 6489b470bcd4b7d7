import type { Stage } from "../context.js";
import { resolveDeliveryId } from "../deliveryId.js";
import { outcome } from "../types.js";
import { routeOf } from "./require.js";

export const DUPLICATE = outcome(200, { status: "duplicate" });

export interface IdempotencyDeps {
  /** Records the key; `true` when it was already recorded (a duplicate). */
  checkAndAdd(key: string): boolean;
  randomId(): string;
}

/** Deliveries are remembered per route: the same id sent to two routes is two events. */
export function seenKey(routeName: string, deliveryId: string): string {
  return `${routeName}:${deliveryId}`;
}

/**
 * Step 8 of spec 4.2. Runs after filters and script, so an ignored or rejected event is never
 * recorded and its retry is processed normally. A request without a delivery id gets a random one.
 */
export function idempotencyStage(deps: IdempotencyDeps): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    const sent = resolveDeliveryId(ctx.inbound.headers);
    if (sent === undefined) return { ...ctx, deliveryId: deps.randomId() };
    if (deps.checkAndAdd(seenKey(route.name, sent))) return DUPLICATE;
    return { ...ctx, deliveryId: sent };
  };
}

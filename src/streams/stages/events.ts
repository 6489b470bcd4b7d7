import { refusedWith, type Stage, withCtx } from "../context.js";
import { isPingEvent, resolveEventType, UNNAMED_EVENT } from "../eventType.js";
import { outcome } from "../types.js";
import { payloadOf, routeOf } from "./require.js";

/**
 * The delivery history's reason for an event the route's `events` do not list: a fixed text, with no event
 * type in it (sender text); `svc webhook deliveries` says it with the record's event type
 * (`event issues is not among the route's events`).
 */
export const NOT_AMONG_EVENTS = "event not among the route's events";
/** The same for a ping, which is ignored unless `events` names it, also when the list is empty. */
export const PING_NOT_LISTED = "ping not among the route's events";

/**
 * Step 6 of the processing order (docs/webhook.md). Not in a non-empty `events` list → 200 ignored. A ping is ignored unless the
 * list names it, also when the list is empty (a ping is a hello, not an event to run an agent on);
 * `onPing` lets the caller log it at DEBUG only. The ignored context keeps why (`refusal`), for the delivery
 * history: one of the two constants above.
 */
export function eventCheckStage(deps: { onPing?: (routeName: string, event: string) => void } = {}): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    const event = resolveEventType(ctx.inbound.headers, payloadOf(ctx));
    const events = route.route.events ?? [];
    const listed = event !== undefined && events.includes(event);
    if (event !== undefined && isPingEvent(event) && !listed) {
      deps.onPing?.(route.name, event);
      return refusedWith(ctx, outcome(200, { status: "ignored", event }), PING_NOT_LISTED);
    }
    if (events.length > 0 && !listed)
      return refusedWith(
        ctx,
        outcome(200, { status: "ignored", event: event ?? UNNAMED_EVENT }),
        NOT_AMONG_EVENTS,
      );
    return withCtx(ctx, { event });
  };
}

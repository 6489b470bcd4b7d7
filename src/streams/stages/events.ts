import { type Stage, withCtx } from "../context.js";
import { isPingEvent, resolveEventType, UNNAMED_EVENT } from "../eventType.js";
import { outcome } from "../types.js";
import { payloadOf, routeOf } from "./require.js";

/**
 * Step 6 of the processing order (docs/webhook.md). Not in a non-empty `events` list → 200 ignored. A ping is ignored unless the
 * list names it, also when the list is empty (a ping is a hello, not an event to run an agent on);
 * `onPing` lets the caller log it at DEBUG only.
 */
export function eventCheckStage(deps: { onPing?: (routeName: string, event: string) => void } = {}): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    const event = resolveEventType(ctx.inbound.headers, payloadOf(ctx));
    const events = route.route.events ?? [];
    const listed = event !== undefined && events.includes(event);
    if (event !== undefined && isPingEvent(event) && !listed) {
      deps.onPing?.(route.name, event);
      return outcome(200, { status: "ignored", event });
    }
    if (events.length > 0 && !listed)
      return outcome(200, { status: "ignored", event: event ?? UNNAMED_EVENT });
    return withCtx(ctx, { event });
  };
}

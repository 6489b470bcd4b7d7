import type { Route } from "../../src/config/sections/webhook.js";
import type { SharedRun } from "../../src/io/state/redis/sharedRun.js";
import type { AcceptedEvent } from "../../src/streams/context.js";

/** A route `grp` that coalesces on the payload's `n`, with the given windows. */
export function groupedRoute(windowSeconds: number, maxWaitSeconds: number): Route {
  return {
    deliver: "log",
    deliver_only: false,
    mirror_to_session: false,
    coalesce: { key: "n", window_seconds: windowSeconds, max_wait_seconds: maxWaitSeconds },
  };
}

/** An accepted `push` event of route `grp` for group `n: 1`, as the pipeline hands it to coalescing. */
export function groupedEvent(route: Route, deliveryId: string, receivedAt = Date.now()): AcceptedEvent {
  return {
    routeName: "grp",
    route,
    profile: "default",
    event: "push",
    deliveryId,
    payload: { n: 1 },
    headers: {},
    prompt: `grp ${deliveryId}`,
    extra: {},
    receivedAt,
  };
}

/** The run a shared (Redis) coalescing is handed for `e`, as the gateway makes it. */
export function sharedRunOf(e: AcceptedEvent): SharedRun {
  return {
    profile: e.profile,
    routeName: e.routeName,
    event: "push",
    deliveryId: e.deliveryId,
    prompt: e.prompt,
    extra: {},
    receivedAt: e.receivedAt,
  };
}

import type { Route } from "../../../config/sections/webhook.js";
import type { PendingRun } from "../../stores/pendingRuns.js";

/** A route's settings as a shared run keeps them: everything but its secret, which stays out of Redis. */
export type StoredRoute = Omit<Route, "secret">;

/**
 * A run as the shared queue and the shared coalescing groups keep it: the pending run, with the route it
 * was accepted under, so a subscription disabled or removed before the run starts does not drop it.
 */
export interface SharedRun extends PendingRun {
  readonly route?: StoredRoute;
  // Its `reply` and `retry` (PendingRun's): kept once its delivery waits to retry outside the run's slot, so an
  // instance that takes the run over delivers the reply without running the agent again, from the part and to
  // the recipients the retry names, once it is due, its attempts counted on.
  /** The run ended outside its slot (delivered, refused or given up): its job is only to be finished. */
  readonly done?: true;
  /**
   * When its `retry` is due on Redis's clock (`onRedis`, epoch ms): set as a stop hands the run on before that
   * retry is due, for the instance that takes it at once to read on its own clock (the retry's `dueAt` is on
   * the stopping instance's). Read only for the retry it was told for (`retryDueAt`, that retry's `dueAt`): a
   * later retry stored beside it (by a version that kept it) is not timed by it. Not stored again once taken:
   * what the run keeps from there is timed on that instance's clock.
   */
  readonly handedOnDue?: { readonly retryDueAt: number; readonly onRedis: number };
}

export function storedRoute(route: Route): StoredRoute {
  const { secret: _secret, ...kept } = route;
  return kept;
}

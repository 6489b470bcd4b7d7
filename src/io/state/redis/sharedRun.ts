import type { RunRecord } from "../../../agent/runRecord.js";
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
  /**
   * The reply its agent made, kept once its delivery waits to retry outside the run's slot: an instance that
   * takes the run over delivers it without running the agent again.
   */
  readonly reply?: {
    readonly text: string;
    readonly record?: RunRecord;
    readonly failed?: string;
    /** The id a cron job's fire was delivered under: the instance that goes on delivers under it too. */
    readonly deliveryId?: string;
  };
  /**
   * The retry its delivery waits for, kept with the reply: when it is due (epoch ms) and the delivery's
   * attempts made so far, the parts of a split message already delivered before the one it retries (stored
   * again as each later part goes out), the target, and the recipients it retries when the platform took the
   * message for the others. The instance that takes the run over delivers from that part once it is due,
   * to those recipients alone, and counts on.
   */
  readonly retry?: {
    readonly dueAt: number;
    readonly attempts: number;
    readonly partsDelivered?: number;
    readonly target?: string;
    readonly recipients?: readonly string[];
  };
  /** The run ended outside its slot (delivered, refused or given up): its job is only to be finished. */
  readonly done?: true;
}

export function storedRoute(route: Route): StoredRoute {
  const { secret: _secret, ...kept } = route;
  return kept;
}

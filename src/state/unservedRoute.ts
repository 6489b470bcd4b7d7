import type { ResolvedRoute } from "../streams/context.js";

/**
 * Why this gateway does not serve the route a shared run names, as its log says it: a disabled
 * subscription, a route bound to another profile, or no route of that name here.
 */
export function unservedRouteReason(
  routeName: string,
  profile: string,
  found: ResolvedRoute | undefined,
  disabled: boolean,
): string {
  if (found !== undefined)
    return `this gateway's config serves route ${routeName} for profile ${found.profile}, not for ${profile}, the profile it was accepted for`;
  if (disabled)
    return `${routeName} is a disabled subscription now (svc webhook enable ${routeName} serves it again)`;
  return `this gateway's config serves no route ${routeName} (removed since the event was accepted, or only in the config of the instance that accepted it)`;
}

/**
 * The WARN line of a shared run stored without its route's settings (by a version of svc that did not keep
 * them) whose route is not served here: it is not dropped, but waits in Redis and is looked at again.
 */
export function runWaitsForRouteLine(
  routeName: string,
  profile: string,
  reason: string,
  laterMs: number,
  jobId: string,
): string {
  const every = laterMs % 1000 === 0 ? `${laterMs / 1000} s` : `${laterMs} ms`;
  return `[webhook] ${routeName}: a run stored by an earlier version of svc, without its route's settings, cannot run here — ${reason}; it waits in Redis, looked at again every ${every}, and runs on the first instance that serves ${routeName} for profile ${profile} (nothing is dropped; to drop it, remove job ${jobId} from the runs queue with BullMQ's Queue.remove)`;
}

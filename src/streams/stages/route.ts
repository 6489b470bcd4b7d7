import { DEFAULT_PROFILE } from "../../config/paths.js";
import { type ResolvedRoute, type Stage, withCtx } from "../context.js";
import { UNKNOWN_ROUTE } from "../frontAnswers.js";
import type { Inbound } from "../types.js";

export interface RouteLookupDeps {
  lookup(name: string): ResolvedRoute | undefined;
  multiplexProfiles(): boolean;
}

/**
 * Step 1 of the processing order (docs/webhook.md). With multiplexing on, a route answers only under its bound profile (unbound:
 * default profile only); a mismatch gets exactly the unknown-route answer so it never reveals that the
 * route exists. The check runs here, before auth, so an unsigned probe learns nothing either.
 */
export function routeLookupStage(deps: RouteLookupDeps): Stage {
  const find = routeFinder(deps);
  return (ctx) => {
    const route = find(ctx.inbound);
    return route === undefined ? UNKNOWN_ROUTE : withCtx(ctx, { route });
  };
}

/** The route a request is served by, or undefined when it gets the unknown-route answer (see above). */
export function routeFinder(deps: RouteLookupDeps): (inbound: Inbound) => ResolvedRoute | undefined {
  return (inbound) => {
    const route = deps.lookup(inbound.routeName);
    if (route === undefined) return undefined;
    if (deps.multiplexProfiles()) {
      const asked = inbound.profile ?? DEFAULT_PROFILE;
      if (asked !== route.profile) return undefined;
    }
    return route;
  };
}

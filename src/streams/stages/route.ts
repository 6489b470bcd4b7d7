import { DEFAULT_PROFILE } from "../../config/paths.js";
import type { ResolvedRoute, Stage } from "../context.js";
import { errorOutcome } from "../types.js";

export interface RouteLookupDeps {
  lookup(name: string): ResolvedRoute | undefined;
  multiplexProfiles(): boolean;
}

export const UNKNOWN_ROUTE = errorOutcome(404, "Unknown route");

/**
 * Step 1 of the processing order (docs/webhook.md). With multiplexing on, a route answers only under its bound profile (unbound:
 * default profile only); a mismatch gets exactly the unknown-route answer so it never reveals that the
 * route exists. The check runs here, before auth, so an unsigned probe learns nothing either.
 */
export function routeLookupStage(deps: RouteLookupDeps): Stage {
  return (ctx) => {
    const route = deps.lookup(ctx.inbound.routeName);
    if (route === undefined) return UNKNOWN_ROUTE;
    if (deps.multiplexProfiles()) {
      const asked = ctx.inbound.profile ?? DEFAULT_PROFILE;
      if (asked !== route.profile) return UNKNOWN_ROUTE;
    }
    return { ...ctx, route };
  };
}

import { refusedWith, type Stage } from "../context.js";
import { headerEventType } from "../eventType.js";
import { filterRefusals, firstRefusal } from "../filters.js";
import { type Outcome, outcome } from "../types.js";
import { payloadOf, routeOf } from "./require.js";

export const IGNORED_BY_FILTER = outcome(200, { status: "ignored", reason: "filter" });

export interface FilterDeps {
  /** The `in_file` list reader of a profile (relative list paths resolve under that profile's root). */
  listReader(profile: string): { readList(path: string): ReadonlySet<string> };
}

/**
 * Step 7a of the processing order (docs/webhook.md): every top-level filter must match. The ignored context
 * keeps which one did not (`refusal`: the string made for it at the route's first ignore, kept with its filters).
 */
export function filterStage(deps: FilterDeps): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    const filters = route.route.filters;
    if (filters === undefined || filters.length === 0) return ctx;
    const subject = { payload: payloadOf(ctx), event: ctx.event, headers: ctx.inbound.headers };
    const unmatched = firstRefusal(filters, subject, deps.listReader(route.profile));
    if (unmatched < 0) return ctx;
    return refusedWith(
      ctx,
      ignored(ctx.event, ctx.inbound.headers),
      filterRefusals(filters)[unmatched] as string,
    );
  };
}

/**
 * The ignore, with an event type only the body named (Stripe's `type`, `event_type`) kept aside for the
 * delivery history (never sent), which reads a header's itself: an event named in a header (GitHub's, the
 * benchmarked ignore) gets the shared answer, with no allocation.
 */
function ignored(event: string | undefined, headers: Readonly<Record<string, string>>): Outcome {
  if (event === undefined || headerEventType(headers) !== undefined) return IGNORED_BY_FILTER;
  return { status: IGNORED_BY_FILTER.status, body: IGNORED_BY_FILTER.body, event };
}

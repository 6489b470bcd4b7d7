import type { Stage } from "../context.js";
import { matchesAll } from "../filters.js";
import { outcome } from "../types.js";
import { payloadOf, routeOf } from "./require.js";

export const IGNORED_BY_FILTER = outcome(200, { status: "ignored", reason: "filter" });

export interface FilterDeps {
  /** The `in_file` list reader of a profile (relative list paths resolve under that profile's root). */
  listReader(profile: string): { readList(path: string): ReadonlySet<string> };
}

/** Step 7a of the processing order (docs/webhook.md): every top-level filter must match. */
export function filterStage(deps: FilterDeps): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    const filters = route.route.filters;
    if (filters === undefined || filters.length === 0) return ctx;
    const subject = { payload: payloadOf(ctx), event: ctx.event, headers: ctx.inbound.headers };
    return matchesAll(filters, subject, deps.listReader(route.profile)) ? ctx : IGNORED_BY_FILTER;
  };
}

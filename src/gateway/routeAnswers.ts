import type { RouteRegistry } from "../actors/routes.js";

/** Answers a request gets only once the pipeline found its route (accepted, ignored, 401, 413, 429, 502). */
const ROUTE_ANSWERS: ReadonlySet<number> = new Set([200, 202, 401, 413, 429, 502]);

/**
 * Whether an answer came from the served route `name`, for the request metrics' label and the delivery
 * history (docs/operations.md). A static route is one whatever its answer; for another name a 404, 405 or
 * 400 is not (counted as `(unknown)`), and the answers above are a subscription's. Any other answer can be
 * given before the route is looked up — a 417 or 431 the node server gives on the head alone, a 503 while
 * the gateway stops — so the name is looked up: a path a sender invents never becomes a label or a row.
 */
export function answeredByRoute(
  registry: Pick<RouteRegistry, "current" | "lookup">,
): (name: string, status: number) => boolean {
  return (name, status) => {
    if (registry.current().staticRoutes.has(name)) return true;
    if (status === 404 || status === 405 || status === 400) return false;
    return ROUTE_ANSWERS.has(status) || registry.lookup(name) !== undefined;
  };
}

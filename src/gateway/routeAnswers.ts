import type { RouteRegistry } from "../actors/routes.js";
import { DEFAULT_PROFILE } from "../config/paths.js";
import type { ResolvedRoute } from "../streams/context.js";

/** Answers a request gets only once the pipeline found its route (accepted, ignored, 401, 413, 429, 502). */
const ROUTE_ANSWERS: ReadonlySet<number> = new Set([200, 202, 401, 413, 429, 502]);

/**
 * Whether an answer came from the served route `name`, asked for under `profile` (the path's `/p/<profile>/`
 * segment, undefined for `/webhooks/<name>`), for the request metrics' label and the delivery history
 * (docs/operations.md). A 404 never is: the route lookup gives it to a name no route has and, with
 * multiplexing, to a route asked for under another profile, which must not be told apart from an unknown
 * route (docs/webhook.md). A static route served at that path is one whatever its other answers, and so is
 * a subscription, whose answers above come only once it was found. Any other answer (a 405, a 400 of a
 * body that is no JSON or of bad framing) can be given before the route is looked up — a 417 or 431 the node server gives on the
 * head alone, a 503 while the gateway stops — so the route and its profile binding are looked up: a path a
 * sender invents never becomes a label or a row.
 */
export function answeredByRoute(
  registry: Pick<RouteRegistry, "current" | "lookup">,
): (name: string, status: number, profile: string | undefined) => boolean {
  /** As the route lookup decides it (src/streams/stages/route.ts): with multiplexing, only under its profile. */
  const servedAt = (route: ResolvedRoute | undefined, profile: string | undefined) =>
    route !== undefined &&
    (!registry.current().multiplexProfiles || (profile ?? DEFAULT_PROFILE) === route.profile);
  return (name, status, profile) => {
    if (status === 404) return false;
    const found = registry.current().staticRoutes.get(name);
    if (found !== undefined) return servedAt(found, profile);
    return ROUTE_ANSWERS.has(status) || servedAt(registry.lookup(name), profile);
  };
}

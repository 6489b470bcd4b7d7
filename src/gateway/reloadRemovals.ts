import type { Config } from "../config/schema.js";
import { routeKey } from "../config/sections/webhook.js";
import { movedRoutes } from "./movedRoutes.js";

const plural = (count: number, one: string, many: string) => (count === 1 ? one : many);

/**
 * The WARN line for what a reload of config.yaml takes away from the running config — static routes, the
 * URLs of the routes it moved, and MCP servers, each named by its key — or undefined when it takes nothing. A removal may be meant; a file read
 * while a writer had not finished it (a cut that still parses, its later routes missing) is one too, and
 * must not pass as a routine reload: the line names every entry, so the user sees what went and can put it
 * back.
 */
export function reloadRemovals(
  before: Config,
  after: Config,
  file: string,
  /** The subscriptions served before the reload: multiplexing turned on or off moves them too. */
  subscriptions: Parameters<typeof movedRoutes>[2] = [],
): string | undefined {
  const kept = after.platforms.webhook.routes;
  const routes = Object.entries(before.platforms.webhook.routes)
    .filter(([name]) => !Object.hasOwn(kept, name))
    .map(([name, route]) => routeKey(name, route));
  const servers = Object.keys(before.mcp_servers)
    .filter((name) => !Object.hasOwn(after.mcp_servers, name))
    .map((name) => `mcp_servers.${name}`);
  const moved = movedRoutes(before, after, subscriptions);
  if (routes.length === 0 && moved.length === 0 && servers.length === 0) return undefined;
  const removed = [
    ...(routes.length === 0
      ? []
      : [
          `${plural(routes.length, "route", "routes")} ${routes.join(", ")} (${plural(routes.length, "it answers", "they answer")} 404 unless a subscription of that name serves ${plural(routes.length, "it", "them")})`,
        ]),
    ...(servers.length === 0
      ? []
      : [
          `${plural(servers.length, "MCP server", "MCP servers")} ${servers.join(", ")} (stopped, ${plural(servers.length, "its", "their")} tools no longer offered)`,
        ]),
  ];
  const clauses = [
    ...(removed.length === 0 ? [] : [`removed ${removed.join(" and ")}`]),
    ...(moved.length === 0
      ? []
      : [
          `moved ${plural(moved.length, "route", "routes")} ${moved.join(", and ")} (a sender still posting to the old URL gets 404: gateway.multiplex_profiles and the route's profile decide it)`,
        ]),
  ];
  return `[gateway] the reload of ${file} ${clauses.join(" and ")} — if that was not meant (a file saved or copied while the gateway read it can be cut short and still parse), put ${routes.length + moved.length + servers.length === 1 ? "it" : "them"} back in ${file} and reload again (SIGHUP, or svc mcp reload)`;
}

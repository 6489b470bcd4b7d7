import { describe } from "../config/describe.js";
import { givenBy } from "../config/givenValues.js";
import { DEFAULT_PROFILE } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import { type Route, routeKey } from "../config/sections/webhook.js";

/** The paths a route answers at: `gateway.multiplex_profiles` and its profile decide them (docs/webhook.md). */
function routePaths(name: string, route: Pick<Route, "profile">, multiplex: boolean): string[] {
  const profile = route.profile ?? DEFAULT_PROFILE;
  if (!multiplex) return [`/webhooks/${name}`];
  if (profile === DEFAULT_PROFILE) return [`/webhooks/${name}`, `/p/${DEFAULT_PROFILE}/webhooks/${name}`];
  return [`/p/${profile}/webhooks/${name}`];
}

/**
 * `path` (one of `routePaths`) as a message shows it: a profile a `${VAR}` gave (`profile: ${PROFILE}`) is
 * named as config.yaml writes it, `/p/<"${PROFILE}" (the value it gives is not shown)>/webhooks/<name>`.
 */
function shownPath(path: string, route: Pick<Route, "profile">): string {
  const given = givenBy(route, "profile");
  const profile = route.profile ?? DEFAULT_PROFILE;
  return given === undefined || !path.startsWith(`/p/${profile}/`)
    ? path
    : `/p/<${describe(given)}>${path.slice(`/p/${profile}`.length)}`;
}

/**
 * The routes a reload kept that no longer answer at a path they answered at (multiplexing turned on or off,
 * a profile changed under it): `<key> to <paths now>, no longer at <paths lost>`. Its senders get 404 there,
 * as for a removed route; a file cut before its `gateway:` section turns multiplexing off just so.
 */
export function movedRoutes(
  before: Config,
  after: Config,
  /** The subscriptions served before the reload (a static route of the same name shadows them after it). */
  subscriptions: readonly { readonly name: string; readonly profile: string }[] = [],
): string[] {
  const moved: string[] = [];
  for (const [name, route] of Object.entries(after.platforms.webhook.routes)) {
    const was = before.platforms.webhook.routes[name];
    if (was === undefined) continue;
    const now = routePaths(name, route, after.gateway.multiplex_profiles);
    const lost = routePaths(name, was, before.gateway.multiplex_profiles).filter(
      (path) => !now.includes(path),
    );
    if (lost.length > 0)
      moved.push(
        `${routeKey(name, route)} to ${now.map((path) => shownPath(path, route)).join(" and ")}, no longer at ${lost.map((path) => shownPath(path, was)).join(" and ")}`,
      );
  }
  // A subscription's profile is its record's, which the reload leaves: only multiplexing turned on or off moves it.
  const multiplex = after.gateway.multiplex_profiles;
  if (multiplex === before.gateway.multiplex_profiles) return moved;
  for (const { name, profile } of subscriptions) {
    if (Object.hasOwn(after.platforms.webhook.routes, name)) continue;
    const now = routePaths(name, { profile }, multiplex);
    const lost = routePaths(name, { profile }, !multiplex).filter((path) => !now.includes(path));
    if (lost.length > 0)
      moved.push(`subscription ${name} to ${now.join(" and ")}, no longer at ${lost.join(" and ")}`);
  }
  return moved;
}

import { fromCallback } from "xstate";
import { DEFAULT_PROFILE } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import {
  globalSecretKey,
  type Route,
  type SecretWriting,
  secretWriting,
} from "../config/sections/webhook.js";
import type { ResolvedRoute, RouteStanding } from "../streams/context.js";

/** Routes from somewhere other than config.yaml (dynamic subscriptions); a static route of the same name wins. */
export interface RouteSource {
  lookup(name: string): Route | undefined;
  /**
   * Every route it holds, by name, from one read of its store: a `lookup` per name would read the store
   * again for each (thousands of reads of a subscription file just written, for one list of names).
   */
  current(): ReadonlyMap<string, Route>;
  /** The secrets of every record of the store behind it, served or not (a disabled subscription's too). */
  storedSecrets?(): readonly string[];
}

/** What the request path reads on every request; replaced as a whole on reload. */
export interface RouteTable {
  readonly multiplexProfiles: boolean;
  readonly maxBodyBytes: number;
  readonly rateLimit: number;
  readonly scriptTimeoutMs: number;
  readonly globalSecret: string | undefined;
  /** Where the global secret is written, for messages (`platforms.webhook.secret` or `...extra.secret`). */
  readonly globalSecretKey?: string;
  /** How the global secret is written, for the warnings about a `$NAME` (holds no text of it). */
  readonly globalSecretWriting?: SecretWriting | undefined;
  readonly staticRoutes: ReadonlyMap<string, ResolvedRoute>;
  /**
   * Shared by its static routes and the subscriptions' routes looked up while it is current: retired when
   * the registry replaces this table (see `ResolvedRoute.standing`).
   */
  readonly standing?: TableStanding;
}

export interface TableStanding extends RouteStanding {
  retired: boolean;
}

export function resolveRoute(
  name: string,
  route: Route,
  globalSecret: string | undefined,
): ResolvedRoute | undefined {
  const secret = route.secret ?? globalSecret;
  if (secret === undefined) return undefined;
  return { name, route, secret, profile: route.profile ?? DEFAULT_PROFILE };
}

export function routeTable(config: Config): RouteTable {
  const webhook = config.platforms.webhook;
  const staticRoutes = new Map<string, ResolvedRoute>();
  const standing: TableStanding = { retired: false };
  for (const [name, route] of Object.entries(webhook.routes)) {
    const resolved = resolveRoute(name, route, webhook.secret);
    if (resolved !== undefined) staticRoutes.set(name, { ...resolved, standing });
  }
  const table: RouteTable = {
    multiplexProfiles: config.gateway.multiplex_profiles,
    maxBodyBytes: webhook.max_body_bytes,
    rateLimit: webhook.rate_limit,
    scriptTimeoutMs: webhook.script_timeout_seconds * 1000,
    globalSecret: webhook.secret,
    globalSecretKey: globalSecretKey(webhook),
    globalSecretWriting: secretWriting(webhook),
    staticRoutes,
    standing,
  };
  // Not enumerable: the table's own fields stay what the request path and the warnings read.
  return Object.defineProperty(table, "toJSON", { value: routeTableJSON });
}

/**
 * The table as JSON, as the inspector shows a reload's `replace` event: its static routes by name (a Map
 * is `{}` in JSON). The inspector's redaction then hides each route's secret fields, as it does elsewhere.
 */
function routeTableJSON(this: RouteTable): object {
  return { ...this, staticRoutes: Object.fromEntries(this.staticRoutes) };
}

export interface RouteRegistry {
  current(): RouteTable;
  lookup(name: string): ResolvedRoute | undefined;
  /** Every route name the gateway answers, static first. */
  names(): string[];
  /** Every route the gateway answers, static first (the dynamic ones from one read of their store). */
  routes(): ResolvedRoute[];
  replace(table: RouteTable): void;
}

export function createRouteRegistry(initial: RouteTable, dynamic?: RouteSource): RouteRegistry {
  let table = initial;
  /**
   * A subscription's route, standing in the current table: a reload retires it as it does the static
   * routes (an event of it still in its script is then not grouped after the reload's flush).
   */
  const subscriptionRoute = (name: string, route: Route): ResolvedRoute | undefined => {
    const secret = route.secret ?? table.globalSecret;
    if (secret === undefined) return undefined;
    const profile = route.profile ?? DEFAULT_PROFILE;
    const { standing } = table;
    return standing === undefined
      ? { name, route, secret, profile, dynamic: true }
      : { name, route, secret, profile, standing, dynamic: true };
  };
  const dynamicRoute = (name: string): ResolvedRoute | undefined => {
    const found = dynamic?.lookup(name);
    return found === undefined ? undefined : subscriptionRoute(name, found);
  };
  const routes = (): ResolvedRoute[] => {
    const all = [...table.staticRoutes.values()];
    for (const [name, route] of dynamic?.current() ?? []) {
      if (table.staticRoutes.has(name)) continue;
      // A subscription with no secret of its own and no global secret answers 404: it is not a route.
      const resolved = subscriptionRoute(name, route);
      if (resolved !== undefined) all.push(resolved);
    }
    return all;
  };
  return {
    current: () => table,
    lookup: (name) => table.staticRoutes.get(name) ?? dynamicRoute(name),
    names() {
      return routes().map((route) => route.name);
    },
    routes,
    replace(next) {
      if (next === table) return;
      // Requests admitted under the old table look their route up again (a reload may have changed it).
      if (table.standing !== undefined) table.standing.retired = true;
      if (next.standing !== undefined) next.standing.retired = false;
      table = next;
    },
  };
}

/** The registry as a child of the root system: `{type: "replace", table}` swaps the routes (SIGHUP reload). */
export function routesActor(registry: RouteRegistry) {
  return fromCallback<{ type: "replace"; table: RouteTable }>(({ receive }) => {
    receive((event) => registry.replace(event.table));
  });
}

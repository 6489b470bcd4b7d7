import {
  createRouteRegistry,
  type RouteRegistry,
  type RouteSource,
  type RouteTable,
  routesActor,
  routeTable,
} from "../actors/routes.js";
import type { GatewaySystem } from "../actors/system.js";
import type { SvcPaths } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../io/log.js";
import { forgeCommentProgramWarning } from "../io/targets/validate.js";
import { hiddenLogDeliveriesWarning, staticRouteWarnings, toolsetsWarnedAtLoad } from "./routeWarnings.js";

export interface RoutesDeps {
  readonly config: Config;
  readonly paths: SvcPaths;
  readonly logger: Logger;
  readonly system: GatewaySystem;
  /** Subscriptions made with `svc webhook subscribe`; static routes of the same name win. */
  readonly dynamic: RouteSource;
  /** Unknown toolset names the load warned about, per route (`toolsetsWarnedAtLoad`): runs do not repeat them. */
  readonly warnedToolsets?: Set<string>;
  /** The PATH the gateway starts `gh` from (its environment's), for the warning about a missing one. */
  readonly path?: string;
}

export interface Routes {
  readonly registry: RouteRegistry;
  /** Swaps the static routes for the new config's (through the `routes` actor) and warns about its references. */
  reload(config: Config): void;
}

/** The route table: static routes from config.yaml, dynamic subscriptions, the `routes` actor. */
export function createRoutes(deps: RoutesDeps): Routes {
  const { paths, logger } = deps;
  const registry = createRouteRegistry(routeTable(deps.config), deps.dynamic);
  const ref = deps.system.spawn("routes", routesActor(registry));
  const warnAbout = (table: RouteTable, config: Config) => {
    const servers = Object.keys(config.mcp_servers);
    const warnings = staticRouteWarnings(table, paths, servers, config.platforms.webhook.enabled);
    for (const warning of warnings.now) logger.warn(warning);
    // A route commenting through a gh that is not there fails at its first event; with enabled: true the
    // start's credentials check says so instead (svc config check warns of it either way).
    const forge = (config.platforms as Record<string, { enabled?: boolean } | undefined>).forge_comment;
    const gh =
      forge?.enabled === true || deps.path === undefined
        ? undefined
        : forgeCommentProgramWarning(config, paths.config, deps.path);
    if (gh !== undefined) logger.warn(`[delivery] ${gh}`);
    if (deps.warnedToolsets !== undefined)
      for (const [name, { route }] of table.staticRoutes)
        toolsetsWarnedAtLoad(deps.warnedToolsets, name, route.toolsets, servers);
    if (!logger.isLevelEnabled("info")) {
      const hidden = hiddenLogDeliveriesWarning(table, logger.level, paths.config);
      if (hidden !== undefined) logger.warn(hidden);
    }
    void warnings.references.then((later) => {
      // Tagged as the `now` warnings are (`svc config check` prints the same lines untagged).
      for (const warning of later) logger.warn(`[webhook] ${warning}`);
    });
  };
  warnAbout(registry.current(), deps.config);
  return {
    registry,
    reload(config) {
      const table = routeTable(config);
      ref.send({ type: "replace", table });
      warnAbout(table, config);
    },
  };
}

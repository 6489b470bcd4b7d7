import { join } from "node:path";
import { missingReferenceWarnings } from "../actors/routeReferences.js";
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
import { profileBindingWarnings } from "../config/profileWarnings.js";
import type { Config } from "../config/schema.js";
import { secretCharacterWarnings } from "../config/secretWarnings.js";
import type { Logger } from "../io/log.js";
import { profilesOnDisk } from "../io/profiles.js";
import { cronStore } from "../io/stores/cronStore.js";
import type { ProfileResources } from "./profileResources.js";

export interface RoutesDeps {
  readonly config: Config;
  readonly paths: SvcPaths;
  readonly logger: Logger;
  readonly system: GatewaySystem;
  readonly profiles: ProfileResources;
  /** Subscriptions made with `svc webhook subscribe`; static routes of the same name win. */
  readonly dynamic: RouteSource;
}

export interface Routes {
  readonly registry: RouteRegistry;
  /** Swaps the static routes for the new config's (through the `routes` actor) and warns about its references. */
  reload(config: Config): void;
}

/** The route table: static routes from config.yaml, dynamic subscriptions, the `routes` actor. */
export function createRoutes(deps: RoutesDeps): Routes {
  const { paths, logger, profiles } = deps;
  const registry = createRouteRegistry(routeTable(deps.config), deps.dynamic);
  const ref = deps.system.spawn("routes", routesActor(registry));
  const warnMissingReferences = (table: RouteTable) => {
    for (const warning of profileBindingWarnings(table.staticRoutes.values(), {
      file: paths.config,
      multiplex: table.multiplexProfiles,
      profiles: profilesOnDisk(paths.home),
      profilesDir: join(paths.home, "profiles"),
    }))
      logger.warn(warning);
    for (const warning of secretCharacterWarnings(table.staticRoutes.values(), paths.config))
      logger.warn(warning);
    void missingReferenceWarnings(table, {
      configFile: paths.config,
      scriptsDir: (profile) => profiles.paths(profile).scripts,
      cronStore: (profile) => ({
        store: cronStore(profiles.paths(profile).cronJobs),
        path: profiles.paths(profile).cronJobs,
      }),
    }).then((warnings) => {
      for (const warning of warnings) logger.warn(warning);
    });
  };
  warnMissingReferences(registry.current());
  return {
    registry,
    reload(config) {
      const table = routeTable(config);
      ref.send({ type: "replace", table });
      warnMissingReferences(table);
    },
  };
}

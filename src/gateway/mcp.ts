import { type GatewayMcp, startGatewayMcp } from "../actors/mcp/gatewayHub.js";
import type { McpHub } from "../actors/mcp/hub.js";
import type { GatewaySystem } from "../actors/system.js";
import { namedProfile, type SvcPaths, svcPaths } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import type { Agent } from "./agent.js";

export interface Mcp extends GatewayMcp {
  /**
   * The hub a run of `profile` calls: the default profile's, or a named profile's own, started at its
   * first run (its tokens, `.env` and caches under `profiles/<name>/`), with the same servers.
   */
  hubFor(profile: string | undefined): McpHub;
  reloadConfig(config: Config): void;
}

/** The MCP hubs of the configured servers (their connections are actors under the root system). */
export function createMcp(deps: {
  config: Config;
  paths: SvcPaths;
  logger: Logger;
  system: GatewaySystem;
  agent: Agent;
  env?: NodeJS.ProcessEnv;
  metrics?: GatewayMetrics | undefined;
}): Mcp {
  const { logger } = deps;
  let servers = deps.config.mcp_servers;
  // Restart-only (a reload that changes it is warned about): a named profile's hub started after the
  // reload answers approvals as the default profile's does, with the value the gateway started with.
  const approvals = deps.config.gateway.approvals;
  const start = (paths: SvcPaths) =>
    startGatewayMcp({
      paths,
      servers,
      approvals,
      // A named profile's connections log under the same server names: each line names the profile.
      logger: paths.profile === undefined ? logger : logger.child({ profile: paths.profile }),
      runner: deps.agent.runner,
      system: deps.system,
      metrics: deps.metrics,
      ...(deps.env === undefined ? {} : { env: deps.env }),
    });
  const main = start(deps.paths);
  const profiles = new Map<string, GatewayMcp>();
  let stopped = false;
  const reloadFailed = (err: unknown) => logger.error({ err: String(err) }, "[mcp] reload failed");
  return {
    ...main,
    hubFor(profile) {
      const named = namedProfile(profile);
      // After the stop no hub starts again: a late run of a named profile gets the stopped default one.
      if (named === undefined || stopped) return main.hub;
      let hub = profiles.get(named);
      if (hub === undefined) {
        hub = start(svcPaths(deps.paths.home, named));
        profiles.set(named, hub);
      }
      return hub.hub;
    },
    reloadConfig(config) {
      servers = config.mcp_servers;
      void main.reload(servers).catch(reloadFailed);
      for (const hub of profiles.values()) void hub.reload(servers).catch(reloadFailed);
    },
    async stop() {
      stopped = true;
      await Promise.all([main.stop(), ...[...profiles.values()].map((hub) => hub.stop())]);
    },
  };
}

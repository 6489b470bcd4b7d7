import { type GatewayMcp, startGatewayMcp } from "../actors/mcp/gatewayHub.js";
import type { GatewaySystem } from "../actors/system.js";
import type { SvcPaths } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import type { Agent } from "./agent.js";

/** The MCP hub of the configured servers (its connections are actors under the root system). */
export function createMcp(deps: {
  config: Config;
  paths: SvcPaths;
  logger: Logger;
  system: GatewaySystem;
  agent: Agent;
  env?: NodeJS.ProcessEnv;
  metrics?: GatewayMetrics | undefined;
}): GatewayMcp & { reloadConfig(config: Config): void } {
  const { logger } = deps;
  const mcp = startGatewayMcp({
    paths: deps.paths,
    servers: deps.config.mcp_servers,
    approvals: deps.config.gateway.approvals,
    logger,
    runner: deps.agent.runner,
    system: deps.system,
    metrics: deps.metrics,
    ...(deps.env === undefined ? {} : { env: deps.env }),
  });
  return {
    ...mcp,
    reloadConfig(config) {
      void mcp
        .reload(config.mcp_servers)
        .catch((err: unknown) => logger.error({ err: String(err) }, "[mcp] reload failed"));
    },
  };
}

import { z } from "zod";
import { agentSchema, gatewaySchema } from "./sections/agent.js";
import { mcpServersSchema } from "./sections/mcp.js";
import { platformsSchema } from "./sections/platforms.js";
import { stateSchema } from "./sections/state.js";
import { toolsSchema } from "./sections/tools.js";

/** The one configuration schema; each section lives in `sections/`. */
export const configSchema = z.strictObject({
  gateway: gatewaySchema,
  agent: agentSchema,
  platforms: platformsSchema,
  mcp_servers: mcpServersSchema,
  state: stateSchema,
  tools: toolsSchema,
});

export type Config = z.infer<typeof configSchema>;
export type { Route, WebhookSettings } from "./sections/webhook.js";

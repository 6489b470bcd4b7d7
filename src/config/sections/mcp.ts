import { z } from "zod";

/** `mcp_servers`: refined by the MCP client work. String values stay raw: they are rendered at connect time. */
export const mcpServerSchema = z.looseObject({});
export const mcpServersSchema = z.record(z.string(), mcpServerSchema).default({});

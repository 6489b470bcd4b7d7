import type { Command } from "commander";
import { registerMcpAuthCommands } from "./mcpAuth.js";

/** `svc mcp ...` */
export function registerMcpCommands(program: Command): void {
  const mcp = program.command("mcp").description("MCP servers: log in, re-authorize, install");
  registerMcpAuthCommands(mcp);
}

import type { Command } from "commander";

/** `svc mcp ...` */
export function registerMcpCommands(program: Command): void {
  program.command("mcp").description("mcp commands (not built yet)");
}

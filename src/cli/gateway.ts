import type { Command } from "commander";

/** `svc gateway ...` */
export function registerGatewayCommands(program: Command): void {
  program.command("gateway").description("gateway commands (not built yet)");
}

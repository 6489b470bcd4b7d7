import type { Command } from "commander";

/** `svc cron ...` */
export function registerCronCommands(program: Command): void {
  program.command("cron").description("cron commands (not built yet)");
}

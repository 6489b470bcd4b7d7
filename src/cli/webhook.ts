import type { Command } from "commander";

/** `svc webhook ...` */
export function registerWebhookCommands(program: Command): void {
  program.command("webhook").description("webhook commands (not built yet)");
}

#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { describeError, isSvcError } from "../errors.js";
import { registerCronCommands } from "./cron.js";
import { registerGatewayCommands } from "./gateway.js";
import { registerMcpCommands } from "./mcp.js";
import { VERSION } from "./version.js";
import { registerWebhookCommands } from "./webhook.js";

export function buildProgram(): Command {
  const program = new Command("svc")
    .description("Agent gateway: signed webhook receiver and MCP client")
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  registerGatewayCommands(program);
  registerWebhookCommands(program);
  registerCronCommands(program);
  registerMcpCommands(program);
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // The parser already printed the reason (or, for a missing subcommand, the usage): exit 2 (docs/cli.md).
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.stderr.write(`svc: ${isSvcError(err) ? err.message : describeError(err)}\n`);
    process.exitCode = isSvcError(err, "usage") ? 2 : 1;
  }
}

await main();

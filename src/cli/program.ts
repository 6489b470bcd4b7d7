import { Command } from "commander";
import { VERSION } from "../io/version.js";
import { hideValuesInErrors } from "./argumentValues.js";
import { refuseOptionsAsValues } from "./optionAsValue.js";
import { refuseRepeatedOptions } from "./repeatedOptions.js";
import { pointToOtherCommands } from "./unknownCommands.js";

type RegisterCommands = (program: Command) => void;

/**
 * Each command group's module, loaded only when that group runs: `svc webhook list` does not load the
 * gateway (uWebSockets.js, XState, RxJS, the MCP SDK, every delivery platform), which was most of a
 * command's start-up time. In help order.
 */
const COMMAND_GROUPS: Readonly<Record<string, () => Promise<RegisterCommands>>> = {
  gateway: async () => (await import("./gateway.js")).registerGatewayCommands,
  webhook: async () => (await import("./webhook.js")).registerWebhookCommands,
  cron: async () => (await import("./cron.js")).registerCronCommands,
  mcp: async () => (await import("./mcp.js")).registerMcpCommands,
  config: async () => (await import("./config.js")).registerConfigCommands,
};

/**
 * The program with the group named by `argv` registered; none for `--version`; every group otherwise
 * (help, an unknown command, which then gets its did-you-mean).
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command("svc")
    .description("Agent gateway: signed webhook receiver and MCP client")
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  const named = argv[2];
  const groups =
    named === "--version" || named === "-V"
      ? []
      : named !== undefined && Object.hasOwn(COMMAND_GROUPS, named)
        ? [COMMAND_GROUPS[named] as () => Promise<RegisterCommands>]
        : Object.values(COMMAND_GROUPS);
  for (const register of await Promise.all(groups.map((load) => load()))) register(program);
  // `--secrte=s3cr3t` is refused as an unknown option: the value of a mistyped option may be a secret.
  hideValuesInErrors(program, argv);
  refuseRepeatedOptions(program);
  // `--secret --generate-secret`: an option left without its value does not take the next option as one.
  refuseOptionsAsValues(program);
  // `svc status`, `svc mcp health`: named with the command that does their job.
  pointToOtherCommands(program);
  return program;
}

import type { Command } from "commander";

/**
 * Commands other tools have for what svc does with another one (`status`, `health`, `metrics`, `enable`), by the path
 * of the group where they are typed: refused as any unknown command (exit 2), naming what does their job.
 * Commander's own did-you-mean sent `svc health` to `help` and `svc mcp health` to `reauth`.
 */
const INSTEAD: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  svc: {
    status: statusInstead("status"),
    health: statusInstead("health"),
    metrics:
      "svc has no metrics command: the running gateway serves them at GET /metrics on its webhook port, in the Prometheus text format (curl http://<host:port>/metrics, the address svc gateway status prints; docs/operations.md)",
  },
  "svc mcp": {
    health:
      "svc mcp has no health command: svc mcp list (or svc mcp status) shows each server's state in the running gateway, and with none running checks each one; svc mcp test --all exits 1 when one fails",
    enable: enabledInstead("enable", true),
    disable: enabledInstead("disable", false),
  },
};

function statusInstead(name: string): string {
  return `svc has no ${name} command: svc gateway status says whether the gateway runs and answers /health (exit 0 when healthy); svc mcp list shows each MCP server's state`;
}

function enabledInstead(name: string, enabled: boolean): string {
  return `svc mcp has no ${name} command: set mcp_servers.<name>.enabled: ${enabled} in config.yaml, then run svc mcp reload (a running gateway takes it at once)`;
}

/** The path of `command` as typed: `svc`, `svc mcp`. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * Has each group of `program` that has such commands refuse them naming what does their job. Any other
 * unknown word goes on to commander's own refusal, with its did-you-mean.
 */
export function pointToOtherCommands(program: Command): void {
  for (const command of [program, ...program.commands]) {
    const instead = INSTEAD[pathOf(command)];
    if (instead === undefined) continue;
    command.on("command:*", (operands: string[]) => {
      const word = operands[0] ?? "";
      const text = Object.hasOwn(instead, word) ? instead[word] : undefined;
      if (text !== undefined)
        command.error(`error: unknown command '${word}' — ${text}`, { code: "commander.unknownCommand" });
      // Commander's refusal, which its parser calls when nothing listens for an unknown command.
      else (command as unknown as { unknownCommand(): void }).unknownCommand();
    });
  }
}

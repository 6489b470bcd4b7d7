import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runEachInProcess } from "../../helpers/inProcessCli.js";

// The first in-process command of a worker would load the CLI within a test's time; loaded here instead.
beforeAll(() => loadInProcessCli(), 180_000);

let home: TempHome;
beforeAll(() => {
  home = tempHome();
});
afterAll(() => home.cleanup());

/**
 * The command lines, one after another in this worker (helpers/inProcessCli.ts): the parser answers each
 * before any command runs, so what they print needs no process of their own.
 */
const each = <const T extends readonly (readonly string[])[]>(...argsList: T) =>
  runEachInProcess(argsList, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

describe("usage errors exit 2 (docs/cli.md), help exits 0", { timeout: 90_000 }, () => {
  it("a missing command or subcommand prints the usage on stderr and exits 2", async () => {
    const results = await each([], ["webhook"], ["mcp"], ["cron"]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("Usage: svc");
    }
  });

  it("--help and help <command> print the usage on stdout and exit 0", async () => {
    const [top, group, helpCommand] = await each(["--help"], ["webhook", "--help"], ["help", "mcp"]);
    for (const r of [top, group, helpCommand]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: svc");
    }
    expect(group.stdout).toMatch(/subscribe[\s\S]*list[\s\S]*remove[\s\S]*test/);
    // Commander lists only a command's first alias: the other one, the opposite of subscribe, is named in its line.
    expect(group.stdout).toContain("remove a subscription (or: unsubscribe)");
    expect(helpCommand.stdout).toMatch(/login[\s\S]*reauth[\s\S]*install/);
  });

  it("each group's help names the aliases docs/cli.md and docs/mcp.md give beyond a command's first", async () => {
    const [mcp, cron] = await each(["mcp", "--help"], ["cron", "--help"]);
    // Commander wraps the description column: compare the words, not the line breaks.
    const words = (text: string) => text.replace(/\s+/g, " ");
    expect(words(mcp.stdout)).toContain("(or: uninstall)");
    expect(words(mcp.stdout)).toContain("(or: status)");
    expect(words(cron.stdout)).toContain("(or: unpause)");
  });

  it("help <group> <command> prints that command's usage, and never runs it", async () => {
    const [nested, inGroup, extra] = await each(
      ["help", "mcp", "add"],
      ["mcp", "help", "add"],
      ["help", "mcp", "add", "notes-server", "--", "node", "server.mjs"],
    );
    for (const r of [nested, inGroup, extra]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: svc mcp add [options] <name> [target...]");
      expect(r.stderr).toBe("");
    }
    expect(existsSync(join(home.dir, "config.yaml"))).toBe(false);
  });

  it("help <unknown command> names it on stderr before the usage and exits 2", async () => {
    const [top, nested] = await each(["help", "frobnicate"], ["help", "mcp", "frobnicate"]);
    for (const r of [top, nested]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("error: unknown command 'frobnicate'");
    }
    expect(top.stderr).toContain("Usage: svc [options] [command]");
    expect(nested.stderr).toContain("Usage: svc mcp [options] [command]");
  });

  it("an unknown command followed by --help is refused, naming the word, not answered with the help (exit 2)", async () => {
    const results = await each(
      ["gatewya", "--help"],
      ["mcp", "lsit", "--help"],
      ["webhook", "frob", "-h"],
      ["gateway", "stauts", "--help"],
    );
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
    }
    const [top, mcp, webhook, gateway] = results;
    expect(top?.stderr).toContain("error: unknown command 'gatewya'\n(Did you mean gateway?)");
    expect(mcp?.stderr).toContain("error: unknown command 'lsit'\n(Did you mean list?)");
    expect(webhook?.stderr).toContain("error: unknown command 'frob'");
    expect(gateway?.stderr).toContain("unknown command 'gateway stauts' — did you mean svc gateway status?");
    // A known command's --help, and --help after a command's operand, still print the help.
    const [known, operand] = await each(["mcp", "list", "--help"], ["mcp", "call", "notes", "--help"]);
    expect(known.code).toBe(0);
    expect(known.stdout).toContain("Usage: svc mcp list");
    expect(operand.code).toBe(0);
    expect(operand.stdout).toContain("Usage: svc mcp call");
  });

  it("status, health and metrics, which svc does without, are refused with the commands that do their job (not 'Did you mean help?')", async () => {
    const [status, health, metrics, mcpHealth, other, enable, disable] = await each(
      ["status"],
      ["health"],
      ["metrics"],
      ["mcp", "health"],
      ["frobnicate"],
      ["mcp", "enable", "fx"],
      ["mcp", "disable", "fx"],
    );
    for (const r of [status, health, metrics, mcpHealth, enable, disable]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).not.toContain("Did you mean");
    }
    expect(status.stderr).toContain(
      "error: unknown command 'status' — svc has no status command: svc gateway status says whether the gateway runs and answers /health",
    );
    expect(status.stderr).toContain("svc mcp list shows each MCP server's state");
    expect(health.stderr).toContain(
      "error: unknown command 'health' — svc has no health command: svc gateway status",
    );
    expect(metrics.stderr).toContain("the running gateway serves them at GET /metrics on its webhook port");
    expect(mcpHealth.stderr).toContain(
      "error: unknown command 'health' — svc mcp has no health command: svc mcp list (or svc mcp status) shows each server's state",
    );
    expect(enable.stderr).toContain(
      "error: unknown command 'enable' — svc mcp has no enable command: set mcp_servers.<name>.enabled: true in config.yaml, then run svc mcp reload",
    );
    expect(disable.stderr).toContain("set mcp_servers.<name>.enabled: false in config.yaml");
    // Any other word is refused as before.
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("error: unknown command 'frobnicate'");
    expect(other.stderr).toContain("Usage: svc [options] [command]");
  });

  it("a mistyped option of svc cron create is named with the one meant, not as the required one missing", async () => {
    const [typo, missing] = await each(
      ["cron", "create", "--name", "a", "--shedule", "every 1h", "--prompt", "p"],
      ["cron", "create", "--name", "a", "--prompt", "p"],
    );
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("error: unknown option '--shedule'\n(Did you mean --schedule?)");
    expect(typo.stderr).not.toContain("required option");
    // Left out, it is still named as required, with the command's usage.
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("error: required option '--schedule <expr>' not specified");
    expect(missing.stderr).toContain("Usage: svc cron create [options]");
    expect(existsSync(join(home.dir, "cron"))).toBe(false);
  });
});

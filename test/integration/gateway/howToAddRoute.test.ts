import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/**
 * The "No routes yet" hint showed a whole `platforms:` block; pasted into a config.yaml that has one already
 * (as `svc mcp add` and `svc gateway setup` write it), the file became invalid YAML (`platforms` written
 * twice). With `platforms.webhook` in the file, the hint gives only the `routes:` lines to add under it,
 * indented as they go there, and where the secret goes; following it gives a file `svc config check` accepts.
 */

// The tests' homes (`tempHome`) are removed after the file, as any a test file leaves.

/** The hint's message, from the log of a gateway started in `h` and stopped again. */
async function hintOf(h: TempHome): Promise<string> {
  const gateway = await startGatewayInHome(h);
  try {
    const hints = readFileSync(join(h.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes("No routes yet"))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(hints).toHaveLength(1);
    return hints[0] as string;
  } finally {
    await gateway.stop();
  }
}

/** The lines to add and the line they go after, as the hint names them. */
function linesToAdd(hint: string): { after: number; lines: string[] } {
  const lines = hint.split("\n");
  const after = /\(after line (\d+)\):$/.exec(lines[0] as string)?.[1];
  expect(after).toBeDefined();
  const end = lines.findIndex((line) => line.startsWith("and the route's secret"));
  return { after: Number(after), lines: lines.slice(1, end) };
}

const ROUTE_LINES = [
  "    routes:",
  "      github:",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: config interpolation syntax shown to the user
  "        secret: ${GITHUB_WEBHOOK_SECRET}",
  "        events: [pull_request]",
  '        prompt: "Review PR #{number}: {pull_request.title}"',
];

describe("the gateway's hint when there are no routes yet", { timeout: 60_000 }, () => {
  it("for a config.yaml svc gateway setup wrote platforms.webhook into: the routes lines to append", async () => {
    const h = tempHome();
    const file = h.write("config.yaml", "# mine\nagent:\n  max_concurrent_runs: 1\n", 0o600);
    const setup = await svc(h, ["gateway", "setup", "--non-interactive", "--enable", "--port", "9100"]);
    expect(setup.code).toBe(0);
    const written = readFileSync(file, "utf8");
    expect(written).toMatch(/platforms:\n {2}webhook:\n {4}enabled: true\n {4}port: 9100\n$/);

    const hint = await hintOf(h);
    const lastLine = written.trimEnd().split("\n").length;
    expect(hint.split("\n")).toEqual([
      `[webhook] No routes yet. Add these lines under platforms.webhook in ${file} (after line ${lastLine}):`,
      ...ROUTE_LINES,
      `and the route's secret to ${join(h.dir, ".env")}: GITHUB_WEBHOOK_SECRET=<the secret the sender signs with>`,
      "or create one without editing the file: svc webhook subscribe <name>",
    ]);

    // As the hint says: the lines appended (the webhook block ends the file), the secret in .env.
    writeFileSync(file, `${written}${linesToAdd(hint).lines.join("\n")}\n`);
    writeFileSync(join(h.dir, ".env"), "GITHUB_WEBHOOK_SECRET=s3cret-for-the-hint\n", { flag: "a" });
    const check = await svc(h, ["config", "check"]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).not.toMatch(/YAML|GITHUB_WEBHOOK_SECRET|error/i);
    expect(check.stdout).toContain(", 1 route,");
  });

  it("for a config.yaml svc mcp add created, with mcp_servers after the webhook block: after its last line", async () => {
    const h = tempHome();
    const add = await svc(h, ["mcp", "add", "docs", "--", "http://127.0.0.1:9/mcp"]);
    expect(add.code).toBe(0);
    const file = join(h.dir, "config.yaml");
    const written = readFileSync(file, "utf8").split("\n");
    const port = written.findIndex((line) => line === "    port: 8644");
    expect(written[port + 1]).toBe("mcp_servers:");

    const hint = await hintOf(h);
    const { after, lines } = linesToAdd(hint);
    expect(after).toBe(port + 1);
    expect(lines).toEqual(ROUTE_LINES);

    writeFileSync(file, [...written.slice(0, after), ...lines, ...written.slice(after)].join("\n"));
    writeFileSync(join(h.dir, ".env"), "GITHUB_WEBHOOK_SECRET=s3cret-for-the-hint\n", { mode: 0o600 });
    const check = await svc(h, ["config", "check"]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).not.toMatch(/YAML|GITHUB_WEBHOOK_SECRET|error/i);
    expect(check.stdout).toContain(", 1 route,");
  });

  it("without config.yaml: the whole example, as before", async () => {
    const h = tempHome();
    const hint = await hintOf(h);
    expect(hint.split("\n")).toEqual([
      `[webhook] No routes yet. Add one to ${join(h.dir, "config.yaml")}, for example:`,
      "  platforms:",
      "    webhook:",
      "      enabled: true",
      "      host: 127.0.0.1   # this machine only; 0.0.0.0 for every interface",
      ...ROUTE_LINES.map((line) => `  ${line}`),
      "or create one without editing the file: svc webhook subscribe <name>",
    ]);
  });
});

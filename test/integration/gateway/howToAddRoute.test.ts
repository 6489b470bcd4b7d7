import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, waitFor } from "../cli/svc.js";

/**
 * The "No routes yet" hint showed a whole `platforms:` block; pasted into a config.yaml that has one already
 * (as `svc mcp add` and `svc gateway setup` write it), the file became invalid YAML (`platforms` written
 * twice). With `platforms.webhook` in the file, the hint gives only the `routes:` lines to add under it,
 * indented as they go there, and where the secret goes; following it gives a file `svc config check` accepts.
 *
 * The text log (stdout and gateway.log as `svc gateway run` writes them) puts two spaces before every line of
 * a message after its first: the lines, built for the JSON log's columns, were printed two columns right of
 * where they go, and pasted as printed they made the file invalid YAML ("All mapping items must start at the
 * same column"). They are laid out for the columns the log prints them at.
 */

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

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

/**
 * The lines to add, the line they go after and how many columns left of where they are printed they go, as the
 * hint (its message, or its lines as a text log prints them) names them.
 */
function linesToAdd(hint: string): { after: number; lines: string[]; left: number } {
  const lines = hint.split("\n");
  const named = /\(after line (\d+)(?:; each line goes (\d+) columns? left of where it is printed)?\):$/.exec(
    lines[0] as string,
  );
  expect(named).not.toBeNull();
  const end = lines.findIndex((line) => line.trimStart().startsWith("and the route's secret"));
  return { after: Number(named?.[1]), lines: lines.slice(1, end), left: Number(named?.[2] ?? 0) };
}

/** The hint's lines as a text log prints them: from its first line to the `svc webhook subscribe` one. */
function printedHint(log: string): string[] {
  const lines = log.split("\n");
  const first = lines.findIndex((line) => line.includes("No routes yet"));
  expect(first).toBeGreaterThanOrEqual(0);
  const last = lines.findIndex((line, i) => i > first && line.includes("svc webhook subscribe <name>"));
  expect(lines.filter((line) => line.includes("No routes yet"))).toHaveLength(1);
  return lines.slice(first, last + 1);
}

/** The text log of a gateway started in `h` (`env` added to its environment) and stopped again. */
async function textLogOf(h: TempHome, env: Readonly<Record<string, string>> = {}): Promise<string> {
  const file = join(h.dir, "logs", "gateway.log");
  const gateway = await startGateway({
    home: h.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: h.dir, SVC_HOME: h.dir, ...env },
    host: "127.0.0.1",
    port: 0,
    logger: createLogger({ file, stdout: false }),
    drainTimeoutMs: 300,
  });
  await gateway.stop();
  return readFileSync(file, "utf8");
}

/** The printed hint followed as a user does: its lines copied as printed into `file` after the line it names. */
function pasteAsPrinted(file: string, printed: readonly string[]): void {
  const { after, lines, left } = linesToAdd(printed.join("\n"));
  const text = readFileSync(file, "utf8").split("\n");
  const moved = lines.map((line) => line.slice(left));
  writeFileSync(file, [...text.slice(0, after), ...moved, ...text.slice(after)].join("\n"));
}

/** The route's secret put in .env, as the hint says: `svc config check` then finds the file valid, with the route. */
async function loadsWithTheRoute(h: TempHome): Promise<void> {
  writeFileSync(join(h.dir, ".env"), "GITHUB_WEBHOOK_SECRET=s3cret-for-the-hint\n", {
    flag: "a",
    mode: 0o600,
  });
  const check = await svc(h, ["config", "check"]);
  expect(check.code, check.stderr).toBe(0);
  expect(check.stderr).not.toMatch(/YAML|GITHUB_WEBHOOK_SECRET|error/i);
  expect(check.stdout).toContain(", 1 route,");
}

const ROUTE_LINES = [
  "    routes:",
  "      github:",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: config interpolation syntax shown to the user
  "        secret: ${GITHUB_WEBHOOK_SECRET}",
  "        events: [pull_request]",
  '        prompt: "Review PR #{number}: {pull_request.title}"',
];

/** The whole example, `platforms:` at column 0, as it goes in a config.yaml. */
const WHOLE_EXAMPLE = [
  "platforms:",
  "  webhook:",
  "    enabled: true",
  "    host: 127.0.0.1   # this machine only; 0.0.0.0 for every interface",
  ...ROUTE_LINES,
];

/**
 * The whole example followed as printed: its lines, moved left as many columns as the hint says, appended to
 * `file` (created when there is none).
 */
function appendAsPrinted(file: string, printed: readonly string[]): void {
  const hint = printed.join("\n");
  const lines = hint.split("\n");
  const left = /each line goes (\d+) columns? left of where it is printed\)?:$/.exec(lines[0] as string);
  const end = lines.findIndex((line) => line.trimStart().startsWith("and the route's secret"));
  const moved = lines.slice(1, end).map((line) => line.slice(Number(left?.[1] ?? 0)));
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {}
  writeFileSync(file, `${text}${moved.join("\n")}\n`);
}

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

  it("without config.yaml: the whole example, platforms: at column 0", async () => {
    const h = tempHome();
    const hint = await hintOf(h);
    expect(hint.split("\n")).toEqual([
      `[webhook] No routes yet. Add one to ${join(h.dir, "config.yaml")}, for example these lines:`,
      ...WHOLE_EXAMPLE,
      `and the route's secret to ${join(h.dir, ".env")}: GITHUB_WEBHOOK_SECRET=<the secret the sender signs with>`,
      "or create one without editing the file: svc webhook subscribe <name>",
    ]);
  });
});

describe("the hint as stdout and gateway.log print it (text), pasted as printed", { timeout: 60_000 }, () => {
  it("svc gateway run with platforms.webhook and no routes: the routes lines at the columns they go at", async () => {
    const h = tempHome();
    const file = h.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 9100\n",
      0o600,
    );
    const gateway = await startCliGateway(h, children);
    await waitFor(() => gateway.output().includes("svc webhook subscribe <name>"), "the hint");
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);

    const printed = printedHint(gateway.output());
    expect(printedHint(readFileSync(join(h.dir, "logs", "gateway.log"), "utf8"))).toEqual(printed);
    expect(printed[0]).toMatch(
      / INFO \[webhook\] No routes yet\. Add these lines under platforms\.webhook in .+ \(after line 5\):$/,
    );
    // Copied as printed, the log's two spaces included: `routes:` lines up with `port:`.
    expect(printed.slice(1, 1 + ROUTE_LINES.length)).toEqual(ROUTE_LINES);
    expect(printed.slice(1 + ROUTE_LINES.length)).toEqual([
      `  and the route's secret to ${join(h.dir, ".env")}: GITHUB_WEBHOOK_SECRET=<the secret the sender signs with>`,
      "  or create one without editing the file: svc webhook subscribe <name>",
    ]);

    pasteAsPrinted(file, printed);
    await loadsWithTheRoute(h);
  });

  it("a config.yaml svc mcp add created, mcp_servers after the webhook block: pasted after the line named", async () => {
    const h = tempHome();
    const add = await svc(h, ["mcp", "add", "docs", "--", "http://127.0.0.1:9/mcp"]);
    expect(add.code).toBe(0);
    const file = join(h.dir, "config.yaml");

    const printed = printedHint(await textLogOf(h));
    expect(printed.slice(1, 1 + ROUTE_LINES.length)).toEqual(ROUTE_LINES);
    pasteAsPrinted(file, printed);
    expect(readFileSync(file, "utf8")).toMatch(/\n {4}port: 8644\n {4}routes:\n[\s\S]*\nmcp_servers:\n/);
    await loadsWithTheRoute(h);
  });

  it("platforms indented by one space, left of the log's two: printed at its two, told to move them one left", async () => {
    const h = tempHome();
    const file = h.write("config.yaml", "platforms:\n telegram:\n  enabled: false\n", 0o600);

    const printed = printedHint(await textLogOf(h, { WEBHOOK_ENABLED: "true" }));
    expect(printed[0]).toMatch(
      /Add these lines under platforms in .+ \(after line 3; each line goes 1 column left of where it is printed\):$/,
    );
    expect(printed[1]).toBe("  webhook:");
    pasteAsPrinted(file, printed);
    expect(readFileSync(file, "utf8")).toMatch(/^platforms:\n telegram:\n {2}enabled: false\n webhook:\n/);
    await loadsWithTheRoute(h);
  });

  it("a config.yaml without platforms, the webhook on by WEBHOOK_ENABLED: the whole example, pasted at its end", async () => {
    const h = tempHome();
    const file = h.write("config.yaml", 'agent:\n  provider: command\n  command: ["cat"]\n', 0o600);

    const printed = printedHint(await textLogOf(h, { WEBHOOK_ENABLED: "true" }));
    expect(printed[0]).toMatch(
      /Add one to .+config\.yaml, for example these lines \(at the end of the file, platforms being a top-level key; each line goes 2 columns left of where it is printed\):$/,
    );
    // Printed right after the log's two spaces: `platforms:` goes two columns left of that, at column 0.
    expect(printed.slice(1, 1 + WHOLE_EXAMPLE.length)).toEqual(WHOLE_EXAMPLE.map((line) => `  ${line}`));
    appendAsPrinted(file, printed);
    expect(readFileSync(file, "utf8")).toMatch(/^agent:\n[\s\S]*\nplatforms:\n {2}webhook:\n/);
    await loadsWithTheRoute(h);
  });

  it("without config.yaml: the whole example, printed after the log's two spaces, told to move it two left", async () => {
    const h = tempHome();
    const printed = printedHint(await textLogOf(h));
    expect(printed[0]).toMatch(
      /Add one to .+config\.yaml, for example these lines \(each line goes 2 columns left of where it is printed\):$/,
    );
    expect(printed[1]).toBe("  platforms:");
    appendAsPrinted(join(h.dir, "config.yaml"), printed);
    expect(readFileSync(join(h.dir, "config.yaml"), "utf8")).toMatch(/^platforms:\n {2}webhook:\n/);
    await loadsWithTheRoute(h);
  });
});

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runOnTerminal } from "../../helpers/pty.js";

let home: TempHome;
afterEach(() => home.cleanup());

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;
const install = (steps: Parameters<typeof runOnTerminal>[2]) =>
  runOnTerminal(
    [process.execPath, ...SVC_ARGV, "mcp", "install", link("docs", { url: "https://docs.test/mcp" })],
    { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, TERM: "dumb" },
    steps,
  );

describe("svc mcp install <link> on a terminal", { timeout: 90_000 }, () => {
  it("Ctrl-D (end of input) at the confirmation cancels, and the cancel starts a line of its own", async () => {
    home = tempHome();
    const result = await install([{ expect: "[y/N] ", type: "\u0004" }]);
    expect(result.code).toBe(1);
    expect(result.screen).toMatch(/\[y\/N\] \r?\nCancelled; nothing was installed\.\r?\n/);
    expect(existsSync(join(home.dir, "config.yaml"))).toBe(false);
  });

  it("Ctrl-D at the question for a new name cancels on a line of its own; the file is left as it was", async () => {
    home = tempHome();
    const before = "mcp_servers:\n  docs:\n    url: https://mine.test/mcp\n";
    home.write("config.yaml", before);
    const result = await install([{ expect: "New name (empty to cancel): ", type: "\u0004" }]);
    expect(result.code).toBe(1);
    expect(result.screen).toMatch(/\(empty to cancel\): \r?\nCancelled; nothing was installed\.\r?\n/);
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(before);
  });
});

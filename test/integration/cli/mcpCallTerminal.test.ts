import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runOnTerminal } from "../../helpers/pty.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp call on a terminal, a form asked", { timeout: 90_000 }, () => {
  it("Ctrl-C at a field ends the field's line first: the interruption is said on a line of its own", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ mcp_servers: { f: { command: process.execPath, args: [SERVER, "--ask-name"] } } }),
    );
    const result = await runOnTerminal(
      [process.execPath, ...SVC_ARGV, "mcp", "call", "f", "ask-name"],
      { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, TERM: "dumb" },
      [{ expect: "  name: ", type: "\u0003" }],
    );
    // Killed by SIGINT: Python reports it as -2 (a shell as 130).
    expect(result.code).toBe(-2);
    expect(result.screen).toMatch(
      / {2}name: (\^C)?\r?\nsvc: interrupted \(SIGINT\): the call of "ask-name" was cancelled\r?\n/,
    );
  });
});

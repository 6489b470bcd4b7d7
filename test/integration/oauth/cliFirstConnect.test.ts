import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";
import { oidcWithMcpPerFile } from "./helpers.js";

const FOLLOW = join(import.meta.dirname, "../../fakes/authServer/followBrowser.mjs");

const shared = oidcWithMcpPerFile();
let home: TempHome;
// The CLI's first load in this worker, outside any test's 30 s.
beforeAll(() => loadInProcessCli("mcp"), 120_000);
afterEach(() => home?.cleanup());

/**
 * `svc <args>` in this process (test/helpers/inProcessCli.ts), with the worker's environment and the test's
 * home: what the tests look at is its output, exit code and files (its stdin is no terminal, as a spawned
 * command's pipe is not), and a process of its own cost a node start and the OAuth and MCP modules' load.
 */
async function svc(args: string[], env: Record<string, string>) {
  const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
  const { code, stdout, stderr } = await runInProcess(args, {
    ...Object.fromEntries(inherited),
    SVC_HOME: home.dir,
    ...env,
  });
  return { code: code ?? -1, stdout, stderr };
}

/**
 * Spec 5.3: "First connect opens a browser window." A command the user runs (`svc mcp call`,
 * `svc mcp tools`) is that first connect, with or without a terminal on stdin; later commands reuse
 * the stored tokens.
 */
// Two commands, a login through the browser stand-in and the MCP client's first load in this worker: on a
// loaded machine (a load average over 30, beside two CPU burners) this took longer than the default 30 s.
describe("svc mcp call on an auth: oauth server never logged in to", { timeout: 90_000 }, () => {
  it("opens $BROWSER, logs in, calls the tool; the next command reuses the tokens", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `mcp_servers:\n  srv:\n    url: ${shared.mcp.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
    );
    const first = await svc(["mcp", "call", "srv", "whoami"], { BROWSER: `${process.execPath} ${FOLLOW}` });
    expect(first.stderr).toContain("Open this URL to log in to srv:");
    expect(first).toMatchObject({ code: 0, stdout: "hello alice\n" });
    expect(existsSync(join(home.dir, "mcp-tokens", "srv.json"))).toBe(true);

    const again = await svc(["mcp", "tools", "srv"], { BROWSER: "/bin/false" });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/mcp__srv__whoami\s+whoami/);
    expect(again.stderr).not.toContain("Open this URL");
  });
});

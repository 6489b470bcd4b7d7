import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { oidcWithMcpPerFile } from "./helpers.js";

const FOLLOW = join(import.meta.dirname, "../../fakes/authServer/followBrowser.mjs");

const shared = oidcWithMcpPerFile();
let home: TempHome;
afterEach(() => home?.cleanup());

function svc(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
      env: { ...process.env, SVC_HOME: home.dir, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.stdin.end();
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * Spec 5.3: "First connect opens a browser window." A command the user runs (`svc mcp call`,
 * `svc mcp tools`) is that first connect, with or without a terminal on stdin; later commands reuse
 * the stored tokens.
 */
describe("svc mcp call on an auth: oauth server never logged in to", () => {
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

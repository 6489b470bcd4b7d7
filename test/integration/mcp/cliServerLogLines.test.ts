import { execFile } from "node:child_process";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "./harness.js";

/**
 * `svc mcp call` with SVC_LOG_LEVEL set writes the server's log messages and progress on stderr. That text is
 * the server's: a line break in it must not start a line that reads as svc's own (`svc: …`, `error: …`), as
 * the gateway log indents each line after the first (docs/operations.md; docs/mcp.md, Server log messages).
 */

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

function svc(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...SVC_ARGV, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...env } },
      (err, _stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code), stderr }),
    );
  });
}

it("a line break in a server's log message or progress text is indented, never a line of its own", async () => {
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        fx: {
          command: process.execPath,
          args: [STDIO_FIXTURE, "--log-tool"],
          env: { NOTE: "x\nsvc: forged\rerror: forged too" },
        },
      },
    }),
  );
  const res = await svc(["mcp", "call", "fx", "log-env", "--args", '{"name":"NOTE"}'], {
    SVC_LOG_LEVEL: "debug",
  });
  expect(res.code).toBe(0);
  const lines = res.stderr.split("\n");
  expect(lines).toContain("error: [mcp:fx] cfg: using x");
  expect(lines).toContain('debug: fx: "log-env" progress 1/2 — connecting with x');
  // What the server wrote after each break stays under the line it belongs to.
  expect(lines.filter((l) => l.includes("forged"))).toEqual([
    "  svc: forged",
    "  error: forged too",
    "  svc: forged",
    "  error: forged too",
  ]);
}, 20_000);

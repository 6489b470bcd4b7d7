import { execFile } from "node:child_process";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { SERVER_LOG_MAX_CHARS } from "../../../src/actors/mcp/serverLog.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "./harness.js";

/**
 * A server's log message is cut at SERVER_LOG_MAX_CHARS (docs/mcp.md, Server log messages). An emoji is
 * two UTF-16 units: a cut between them would write half of it, which becomes U+FFFD (`�`) in the log.
 */

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

function svc(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: Buffer }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...SVC_ARGV, ...args],
      {
        encoding: "buffer",
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...env },
      },
      (err, _stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code), stderr }),
    );
  });
}

it("a log message cut at 2000 characters right inside an emoji leaves the emoji out whole", async () => {
  // The fixture logs `cfg: using <value>`: the emoji's first half is the message's 2000th unit.
  const before = SERVER_LOG_MAX_CHARS - 1 - "cfg: using ".length;
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        fx: {
          command: process.execPath,
          args: [STDIO_FIXTURE, "--log-tool"],
          env: { NOTE: `${"x".repeat(before)}😀 after the cut` },
        },
      },
    }),
  );
  const res = await svc(["mcp", "call", "fx", "log-env", "--args", '{"name":"NOTE"}'], {
    SVC_LOG_LEVEL: "info",
  });
  expect(res.code).toBe(0);
  const stderr = res.stderr.toString("utf8");
  expect(Buffer.from(stderr, "utf8").equals(res.stderr)).toBe(true);
  expect(stderr).not.toContain("\ufffd");
  expect(stderr.split("\n")).toContain(`error: [mcp:fx] cfg: using ${"x".repeat(before)}…`);
}, 20_000);

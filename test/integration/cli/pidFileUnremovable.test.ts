import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { cliConfig } from "./svc.js";

/**
 * A gateway whose SVC_HOME became read-only while it ran (a remount, a chmod by a deploy script) could not
 * remove gateway.pid at its stop: the error escaped the stop, was logged as `internal error (a promise
 * rejected unhandled); running on` with a stack, and the stop's last line (`stopped (exit 0)`) never came.
 */

const asRoot = process.getuid?.() === 0;
let home: string | undefined;
afterEach(() => {
  if (home === undefined) return;
  chmodSync(home, 0o700);
  rmSync(home, { recursive: true, force: true });
  home = undefined;
});

/** `svc <args>` against `dir` as a user that cannot write it once it is 0555 (nobody, when the tests run as root). */
function svcAsOwner(dir: string, args: readonly string[]) {
  const argv = [process.execPath, ...SVC_ARGV, ...args];
  const [command, ...rest] = asRoot
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...argv]
    : argv;
  return spawnSync(command as string, rest, {
    env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir },
    encoding: "utf8",
  });
}

describe("a gateway.pid the stopping gateway cannot remove", { timeout: 60_000 }, () => {
  it("is said once as a warning naming the file; the stop ends as usual, exit 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
    home = dir;
    writeFileSync(join(dir, "config.yaml"), stringify(cliConfig({ a: { secret: "s" } })), { mode: 0o600 });
    if (asRoot) {
      chownSync(dir, 65534, 65534);
      chownSync(join(dir, "config.yaml"), 65534, 65534);
    }
    const argv = [process.execPath, ...SVC_ARGV, "gateway", "run", "--port", "0"];
    const [command, ...args] = asRoot
      ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...argv]
      : argv;
    const child = spawn(command as string, args, {
      env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on("data", (d) => {
        log += d;
        if (log.includes("Listening on")) resolve();
      }),
    );
    chmodSync(dir, 0o555);
    child.kill("SIGTERM");
    const code = await exited;
    expect(code).toBe(0);
    expect(log).not.toContain("internal error");
    expect(log).toContain(
      `WARN [gateway] ${join(dir, "gateway.pid")} could not be removed (EACCES: permission denied, unlink '${join(dir, "gateway.pid")}') — the next svc gateway status, start or stop removes it (stale) once it can be written there again`,
    );
    expect(log).toMatch(/\[gateway\] stopped \(exit 0\)\n$/);
    expect(existsSync(join(dir, "gateway.pid"))).toBe(true);
  });

  it("left stale (the gateway gone) in an SVC_HOME still read-only: status says not running (exit 3), stop says it could not be removed", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
    home = dir;
    writeFileSync(join(dir, "config.yaml"), stringify(cliConfig({ a: { secret: "s" } })), { mode: 0o644 });
    const gone = spawnSync("true").pid as number;
    writeFileSync(join(dir, "gateway.pid"), `${gone}\n`);
    chmodSync(dir, 0o555);
    const status = svcAsOwner(dir, ["gateway", "status"]);
    expect(status.stderr).toBe("");
    expect(status.stdout).toContain("not running");
    expect(status.status).toBe(3);
    const stop = svcAsOwner(dir, ["gateway", "stop"]);
    expect(stop.stderr).toBe("");
    expect(stop.stdout).toBe(
      `The gateway is not running (${join(dir, "gateway.pid")} is stale, and could not be removed: SVC_HOME cannot be written — the next start removes it once it can)\n`,
    );
    expect(stop.status).toBe(0);
  });
});

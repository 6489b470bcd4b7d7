import { spawn } from "node:child_process";
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
});

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * svc started from a working directory removed since (a release directory a deploy replaced, a checkout
 * deleted under a shell): Node's process.cwd() throws, which only a relative SVC_HOME needs.
 */

// Run from dist/ only (npm test builds it first): tsx, which runs the source, needs a working directory itself.
const built = !SVC_ARGV.includes("tsx");

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/** `svc <args>` run from `dir`, which is removed just before svc starts; SIGTERM once its stdout shows `stopAt`. */
function fromRemovedDir(dir: string, args: readonly string[], svcHome: string, stopAt?: string) {
  mkdirSync(dir);
  const child = spawn(
    "sh",
    ["-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", dir, process.execPath, ...SVC_ARGV, ...args],
    {
      env: { PATH: process.env.PATH ?? "", HOME: home?.dir ?? "/", SVC_HOME: svcHome },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    if (stopAt !== undefined && stdout.includes(stopAt)) child.kill("SIGTERM");
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout, stderr })),
  );
}

describe.runIf(built)("svc run from a working directory that was removed", { timeout: 60_000 }, () => {
  it("works with an absolute SVC_HOME, which needs no working directory", async () => {
    home = tempHome();
    const check = await fromRemovedDir(join(home.dir, "release"), ["config", "check"], home.dir);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain(`ok: webhook on 127.0.0.1:8644`);
    expect(check.code).toBe(0);
    const list = await fromRemovedDir(join(home.dir, "release"), ["webhook", "list"], home.dir);
    expect(list).toMatchObject({ code: 0, stderr: "" });
  });

  it("reads a config.yaml with ${VAR} references (no working directory is needed to replace them)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 0\n    routes:\n      a:\n        secret: ${GH_SECRET}\n",
      0o600,
    );
    home.write(".env", "GH_SECRET=s3cret\n", 0o600);
    const check = await fromRemovedDir(join(home.dir, "release"), ["config", "check"], home.dir);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain("ok: webhook on 127.0.0.1:0, 1 route");
    expect(check.code).toBe(0);
  });

  it("the gateway starts, and warns that agents and stdio MCP servers cannot start in a directory that is gone", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 0\n    routes:\n      a:\n        secret: INSECURE_NO_AUTH\n",
    );
    // Stopped at once: its log up to the start is what is read.
    const run = await fromRemovedDir(
      join(home.dir, "release"),
      ["gateway", "run", "--port", "0"],
      home.dir,
      "Listening on",
    );
    expect(run.stdout).toMatch(
      /WARN \[gateway\] the working directory is gone \(ENOENT[^)]*\): command agents and stdio MCP servers, which start in it, fail to start — restart the gateway from a directory that exists \(systemd: WorkingDirectory=\)/,
    );
    expect(run.stdout).toContain("Listening on 127.0.0.1:");
    expect(run.code).toBe(0);
  });

  it("a relative SVC_HOME says that the directory it is relative to is gone, and what to do (exit 1)", async () => {
    home = tempHome();
    const res = await fromRemovedDir(join(home.dir, "release"), ["webhook", "list"], "data");
    expect(res.stderr).toMatch(
      /^svc: SVC_HOME is the relative path data, but the working directory it is relative to is gone \(ENOENT[^)]*\) — set SVC_HOME to an absolute path, or run svc from a directory that exists\n$/,
    );
    expect(res.code).toBe(1);
  });
});

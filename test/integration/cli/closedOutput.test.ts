import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/**
 * Runs `svc <args>` with a stdout pipe whose reader is gone before the command writes, as `| head -1` or
 * `| grep -q` leave it once they have read what they wanted.
 */
function runWithClosedStdout(dir: string, args: readonly string[]) {
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("svc with a stdout whose reader went away (svc webhook subscribe x | grep -q Secret)", () => {
  it("does its work and exits with its own code, without an EPIPE stack trace", async () => {
    home = tempHome();
    const { code, stderr } = await runWithClosedStdout(home.dir, ["webhook", "subscribe", "ci"]);
    expect(stderr).not.toContain("EPIPE");
    expect(code).toBe(0);
    const store = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(Object.keys(store)).toEqual(["ci"]);
  });
});

describe("svc with a stdout it cannot write (svc webhook deliveries --json > dump.json on a full disk)", () => {
  it("says so in one line and exits 1, without a stack trace", async () => {
    home = tempHome();
    const full = openSync("/dev/full", "w");
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [...SVC_ARGV, "webhook", "deliveries", "--json"], {
        env: { PATH: process.env.PATH ?? "", HOME: home?.dir ?? "", SVC_HOME: home?.dir ?? "" },
        stdio: ["ignore", full, "pipe"],
      });
      let err = "";
      child.stderr?.on("data", (d) => (err += d));
      child.on("error", reject);
      child.on("close", (exit) => resolve({ code: exit, stderr: err }));
    }).finally(() => closeSync(full));
    expect(code).toBe(1);
    expect(stderr).toBe(
      "svc: the output could not be written to stdout (ENOSPC: no space left on device, write) — what was printed is incomplete\n",
    );
  });
});

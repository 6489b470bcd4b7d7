import { spawn } from "node:child_process";
import { chownSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig } from "./svc.js";

/**
 * A container run with a user id its image's /etc/passwd does not list (`docker run --user 54321`,
 * OpenShift's random ids) and no HOME: Node cannot tell that user's home. An absolute SVC_HOME needs none;
 * without one, the command says what to set instead of dying with `uv_os_homedir returned ENOENT`.
 */

const UID = 54321;
const listed = readFileSync("/etc/passwd", "utf8")
  .split("\n")
  .some((line) => line.split(":")[2] === String(UID));

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/** `svc <args>` as that user, with only PATH (and `env`) in its environment; resolves at its exit. */
function asHomelessUser(args: readonly string[], env: Record<string, string>, untilLog?: string) {
  const child = spawn(
    "setpriv",
    [`--reuid=${UID}`, `--regid=${UID}`, "--clear-groups", process.execPath, ...SVC_ARGV, ...args],
    { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    if (untilLog !== undefined && stdout.includes(untilLog)) child.kill("SIGTERM");
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  // A command that hangs fails the test on its exit code rather than the suite's timeout.
  const stopper = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(stopper);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe.runIf(process.getuid?.() === 0 && !listed)(
  "a user with no home directory (no HOME, no /etc/passwd entry)",
  { timeout: 90_000 },
  () => {
    it("runs the gateway when SVC_HOME is set: no home is needed, and SIGTERM stops it with exit 0", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
      chownSync(home.dir, UID, UID);
      chownSync(`${home.dir}/config.yaml`, UID, UID);
      const check = await asHomelessUser(["config", "check"], { SVC_HOME: home.dir });
      expect(check.stderr).toBe("");
      expect(check.stdout).toContain("ok: webhook on 127.0.0.1:0");
      expect(check.code).toBe(0);
      const run = await asHomelessUser(["gateway", "run"], { SVC_HOME: home.dir }, "Listening on 127.0.0.1:");
      expect(run.stderr).toBe("");
      expect(run.stdout).toContain("[gateway] stopped (exit 0)");
      expect(run.code).toBe(0);
    });

    it("without SVC_HOME says there is no home and what to set (exit 1), not a Node stack trace", async () => {
      const problem = `this user (uid ${UID}) has no home directory: HOME is not set and the user database (/etc/passwd) has no entry for it, so ~/.svc means nothing — set SVC_HOME to the directory svc keeps its files in (a volume this user can write, in a container), or set HOME`;
      for (const args of [
        ["gateway", "run", "--port", "0"],
        ["webhook", "list"],
      ]) {
        const res = await asHomelessUser(args, {});
        expect(res.stderr, args.join(" ")).toBe(`svc: ${problem}\n`);
        expect(res.code).toBe(1);
      }
      // svc config check lists it as the problem it found.
      const check = await asHomelessUser(["config", "check"], {});
      expect(check.stderr).toBe(`${problem}\n`);
      expect(check.code).toBe(1);
    });
  },
);

import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig } from "./svc.js";

/**
 * An SVC_HOME the gateway cannot write refuses the start with what to do, before anything listens (a
 * bare `svc: EACCES … mkdir logs` said neither), and a gateway that could not record gateway.pid or
 * gateway.json does not run on unseen by `svc gateway stop|status`.
 */

const homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) {
    chmodSync(home.dir, 0o700);
    home.cleanup();
  }
});

/** `svc gateway run` to its end; as root (whom permissions do not stop) it runs as nobody. */
function gatewayRun(home: TempHome): Promise<{ code: number | null; stderr: string; log: string }> {
  const asRoot = process.getuid?.() === 0;
  const argv = [process.execPath, ...SVC_ARGV, "gateway", "run", "--port", "0"];
  const [command, ...args] = asRoot
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...argv]
    : argv;
  const child = spawn(command as string, args, {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let log = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  child.stdout.on("data", (d) => {
    log += d;
  });
  // A gateway that runs on despite the problem is stopped, and the test fails on its exit code.
  const stopper = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(stopper);
      resolve({ code, stderr, log });
    }),
  );
}

function newHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o644);
  return home;
}

describe("svc gateway run with an SVC_HOME it cannot write", { timeout: 60_000 }, () => {
  it("a read-only SVC_HOME refuses the start, naming it and what to do", async () => {
    const home = newHome();
    chmodSync(home.dir, 0o555);
    const res = await gatewayRun(home);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`svc: ${home.dir}: SVC_HOME cannot be written (EACCES`);
    expect(res.stderr).toContain(
      "fix its owner or permissions (or free disk space), or set SVC_HOME to a directory this user can write",
    );
    expect(res.log).not.toContain("Listening on");
  });

  // Needs another user's file (the gateway runs as nobody under root): a directory in gateway.json's place,
  // which any user can make, is refused before the gateway listens (configCheckGatewayDirs.test.ts).
  it.runIf(process.getuid?.() === 0)(
    "a gateway that cannot record where it listens (gateway.json) stops, exit 1, instead of running unseen",
    async () => {
      const home = newHome();
      // A gateway.json of another user in a sticky directory: the file can be neither replaced nor removed
      // by this one (the home check before it listens finds a file there, as it should be).
      home.write("gateway.json", "{}\n", 0o644);
      chmodSync(home.dir, 0o1777);
      const res = await gatewayRun(home);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        new RegExp(`svc: ${home.dir}: SVC_HOME cannot be written \\((EPERM|EACCES)`),
      );
      expect(res.log).toContain("; stopping");
      expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(
        "SVC_HOME cannot be written",
      );
    },
  );
});

import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, waitFor } from "./svc.js";

/** The signals supervisors, container runtimes and operators send besides SIGTERM and SIGHUP. */
describe("svc gateway run under a supervisor: the other signals", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  const gatewayLog = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
  const start = async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home);
    return gateway;
  };

  it("SIGUSR1 opens no Node debugger and SIGUSR2 does not end it: both are ignored, said in the log", async () => {
    const run = await start();
    for (const signal of ["SIGUSR1", "SIGUSR2"] as const) {
      run.child.kill(signal);
      await waitFor(
        () =>
          gatewayLog().includes(
            `[gateway] ${signal} received: ignored — svc gives it no meaning (gateway.log is reopened after a rotation by itself): SIGHUP reloads the configuration, SIGTERM stops the gateway`,
          ),
        signal,
      );
      const health = await fetch(`http://127.0.0.1:${run.port}/health`);
      expect(health.status).toBe(200);
    }
    expect(run.child.exitCode).toBeNull();
    // Node's default for SIGUSR1 would have said `Debugger listening on ws://127.0.0.1:9229/…`.
    expect(run.stderr()).not.toContain("Debugger listening");
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("SIGQUIT stops it as SIGTERM does: drained, gateway.pid removed, exit 0", async () => {
    const run = await start();
    run.child.kill("SIGQUIT");
    expect(await run.exited).toBe(0);
    expect(gatewayLog()).toContain("[gateway] SIGQUIT received, stopping");
    expect(gatewayLog().trimEnd().split("\n").at(-1)).toContain("INFO [gateway] stopped (exit 0)");
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });
});

const canUnshare =
  process.getuid?.() === 0 &&
  spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" }).status === 0;

describe.runIf(canUnshare)("svc gateway run as a container's pid 1", { timeout: 60_000 }, () => {
  let home: TempHome | undefined;
  afterEach(() => {
    home?.cleanup();
    home = undefined;
  });

  it("warns that it collects no orphaned processes and names the init to run it under; SIGTERM stops it, exit 0", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    // A new pid namespace: the gateway is its pid 1, as a container's entrypoint is.
    const child = spawn(
      "unshare",
      ["--pid", "--fork", "--mount-proc", process.execPath, ...SVC_ARGV, "gateway", "run", "--port", "0"],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const stopper = setTimeout(() => child.kill("SIGKILL"), 45_000);
    try {
      while (!out.includes("Listening on 127.0.0.1:")) {
        if (child.exitCode !== null) throw new Error(`gateway exited: ${out}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(out).toContain(
        "WARN [gateway] running as pid 1 (a container's first process): the processes that agents, route scripts and MCP servers leave behind are not collected when they exit and pile up as zombies — run svc under an init: docker run --init, init: true in compose, or tini as the entrypoint",
      );
      // The gateway, seen from here: unshare's one child.
      const gatewayPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim());
      signalProcess(gatewayPid, "SIGTERM");
      expect(await exited).toBe(0);
      expect(out).toContain("[gateway] stopped (exit 0)");
    } finally {
      clearTimeout(stopper);
      child.kill("SIGKILL");
    }
  });
});

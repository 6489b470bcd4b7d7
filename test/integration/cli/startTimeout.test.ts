import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalProcess } from "../../helpers/process.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc gateway start given up", { timeout: 90_000 }, () => {
  it("--timeout that runs out: exits 1 and leaves no gateway running (it was not left to come up unnoticed after the failure)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    // Loading the gateway's modules alone takes longer than this.
    const res = await svc(home, ["gateway", "start", "--timeout", "0.05"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/did not answer \/health within 0\.05s, so it was stopped/);
    expect(res.stderr).toContain("svc gateway start --timeout <seconds>");
    // The process it started is gone by the time start returns, so no gateway can come up later.
    const pid = Number(/the gateway \(pid (\d+)\)/.exec(res.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
    expect((await svc(home, ["gateway", "status"])).code).toBe(3);
  });

  it("Ctrl-C while it waits: the gateway it started is stopped and the command ends by SIGINT", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const hold = join(import.meta.dirname, "../../helpers/holdGatewayRun.mjs");
    const start = spawn(
      process.execPath,
      [
        ...SVC_ARGV.slice(0, -1),
        "--import",
        hold,
        ...SVC_ARGV.slice(-1),
        "gateway",
        "start",
        "--timeout",
        "60",
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    start.stderr.on("data", (d) => (stderr += d));
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      start.on("exit", (code, signal) => resolve([code, signal])),
    );
    // The gateway it spawned is up as a process, and will never answer /health on its own.
    const gateway = await pidInFile(join(home.dir, "held.pid"));
    signalProcess(start.pid as number, "SIGINT");
    expect(await ended).toEqual([null, "SIGINT"]);
    expect(stderr).toContain(
      `svc: interrupted (SIGINT) before the gateway answered /health: it (pid ${gateway}) was stopped`,
    );
    await vi.waitFor(() => expect(alive(gateway)).toBe(false), { timeout: 5_000 });
    expect((await svc(home, ["gateway", "status"])).code).toBe(3);
  });
});

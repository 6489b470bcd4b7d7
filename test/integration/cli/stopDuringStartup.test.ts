import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { silentLogger } from "../../../src/io/log.js";
import { openStateStore } from "../../../src/state/gatewayState.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, waitFor } from "./svc.js";

/**
 * A stop signal that comes while `svc gateway run` starts (local backend): the start takes no saved run —
 * the run a stop saved at the last shutdown would otherwise be started, cut off at the drain and saved
 * again, its side effects made once more at the next start.
 */
describe("svc gateway run: a SIGTERM while the start replays its journal", { timeout: 60_000 }, () => {
  let home: TempHome | undefined;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    home?.cleanup();
    gateway = home = undefined;
  });

  it("stops at once without running the saved run, which stays in the journal and runs at the next start", async () => {
    home = tempHome();
    const dir = home.dir;
    const ran = join(dir, "ran");
    home.write(
      "config.yaml",
      stringify({
        ...cliConfig({ pr: { secret: "INSECURE_NO_AUTH", prompt: "p" } }),
        agent: { provider: "command", command: ["sh", "-c", `cat >/dev/null; echo run >> '${ran}'`] },
      }),
    );
    // A run accepted (answered 202) by the last gateway and not finished: in the journal.
    const store = openStateStore({ backend: "local" } as never, dir, silentLogger(), Date.now);
    store.runAccepted(pendingRun("saved-1"), Date.now());
    await store.durable();
    await store.close();

    const child = spawn(
      process.execPath,
      [
        ...SVC_ARGV.slice(0, -1),
        "--import",
        join(import.meta.dirname, "../../helpers/termAtReplay.mjs"),
        ...SVC_ARGV.slice(-1),
        "gateway",
        "run",
        "--port",
        "0",
      ],
      { env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir }, stdio: "ignore" },
    );
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code).toBe(0);
    const log = readFileSync(join(dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain("[gateway] SIGTERM received during startup, stopping");
    expect(log).not.toContain("[gateway] SIGTERM received, stopping");
    // Taken before the listener opened.
    expect(log).not.toContain("Listening on");
    expect(log.trimEnd().split("\n").at(-1)).toMatch(/\[gateway\] stopped \(exit 0\)$/);
    // The agent was never started.
    expect(existsSync(ran)).toBe(false);

    // The next start runs it, once.
    gateway = await runForeground(home);
    await waitFor(() => existsSync(ran), "the saved run");
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(readFileSync(ran, "utf8")).toBe("run\n");
  });
});

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { processStartTime } from "../../../src/io/processAlive.js";
import { agentGroupsDir } from "../../../src/state/gatewayState.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, signalGroup } from "../../helpers/process.js";

let home: TempHome;
const leaders: number[] = [];
afterEach(() => {
  for (const pid of leaders.splice(0)) if (alive(pid)) signalGroup(pid, "SIGKILL");
  home.cleanup();
});

/** A process group led by a `sleep`, noted with `label` by a process that is gone (pid 2^22 - 1). */
function orphan(label: string): number {
  const child = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  child.unref();
  const pid = child.pid as number;
  leaders.push(pid);
  const dir = agentGroupsDir(home.dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, String(pid)), `${processStartTime(pid)} 4194303 12345 ${label}\n`);
  return pid;
}

/**
 * A note whose label is of a kind this version does not know (a newer svc's) was said to be a cron job's
 * run: `[cron] sandbox:job42: stopped the agent of its run …`, where no job can have a `:` in its name.
 */
it("names a stopped group noted with a label of a newer svc as such, not as a cron job's run", async () => {
  home = tempHome();
  home.write("config.yaml", JSON.stringify(webhookConfig({ pr: { secret: "s", prompt: "p" } }, { port: 0 })));
  const newer = orphan("sandbox:job42");
  const cron = orphan("cron:nightly");
  const gateway = await startGatewayInHome(home);
  try {
    await vi.waitFor(() => expect([alive(newer), alive(cron)]).toEqual([false, false]), {
      timeout: 15_000,
      interval: 20,
    });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(
      "[state] stopped a process group noted by another svc version (sandbox:job42) left running by a process that was killed",
    );
    expect(log).not.toContain("[cron] sandbox:job42");
    expect(log).toContain(
      "[cron] nightly: stopped the agent of its run left running by a process that was killed",
    );
  } finally {
    await gateway.stop();
  }
});

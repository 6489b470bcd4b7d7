import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { svc } from "./svc.js";

const homes: TempHome[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null) continue;
    signalProcess(child.pid ?? 0, "SIGCONT");
    child.kill("SIGKILL");
  }
  for (const home of homes.splice(0)) home.cleanup();
});

/**
 * A gateway that did not report the reload within --wait (stuck, or paused: SIGSTOP, a debugger, a
 * frozen container) was answered with a line on stdout and exit 0, as if the reload had been applied: a
 * script running `svc mcp reload && …` went on with the old servers.
 */
describe("svc mcp reload to a gateway that does not report within --wait", { timeout: 60_000 }, () => {
  it("fails (exit 1) saying the reload is not confirmed, on stderr", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("config.yaml", stringify(webhookConfig({}, { port: 0 })), 0o600);
    const gateway = await startCliGateway(home, children);
    const pid = gateway.child.pid ?? 0;
    signalProcess(pid, "SIGSTOP");
    const result = await svc(home, ["mcp", "reload", "--wait", "0.5"]);
    signalProcess(pid, "SIGCONT");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `svc: sent SIGHUP to the gateway (pid ${pid}), but it has not reported the reload within 0.5 s (--wait): it may still be reloading, or be stuck — its log says which (${home.dir}/logs/gateway.log); svc mcp list shows the servers it runs, and svc mcp reload --wait <seconds> waits longer\n`,
    );
  });
});

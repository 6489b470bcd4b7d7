import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { svcPaths } from "../../../src/config/paths.js";
import { readStatusFile, writeStatusFile } from "../../../src/io/mcp/statusFile.js";
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
 * The command's reload is still running when --wait runs out (stopping a server that is slow to stop: the
 * gateway, paused here, has not reported it), and a later SIGHUP was refused meanwhile: status.json's
 * lastRefusedReload records that a reload begun since the command's signal was under way. The command said
 * "the gateway refused the reload and keeps the running config", though the gateway goes on to apply the
 * command's config.
 */
describe("svc mcp reload whose reload has not reported by the end of --wait, a later one refused meanwhile", {
  timeout: 60_000,
}, () => {
  it("says the reload is not reported within --wait (exit 1), the refusal a later reload's", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("config.yaml", stringify(webhookConfig({}, { port: 0 })), 0o600);
    const gateway = await startCliGateway(home, children);
    const pid = gateway.child.pid ?? 0;
    signalProcess(pid, "SIGSTOP");
    // Stamped past the command's signal, as the gateway stamps a refusal that lands while the command's
    // reload (begun at its signal) is still stopping servers.
    const cache = svcPaths(home.dir).mcpCache;
    const soon = new Date(Date.now() + 60_000).toISOString();
    writeStatusFile(cache, {
      pid,
      updatedAt: soon,
      servers: [],
      ...readStatusFile(cache),
      lastRefusedReload: { at: soon, why: "config.yaml: line 3: bad", underway: soon },
    });
    const result = await svc(home, ["mcp", "reload", "--wait", "0.5"]);
    signalProcess(pid, "SIGCONT");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `svc: sent SIGHUP to the gateway (pid ${pid}), but it has not reported the reload within 0.5 s (--wait): it may still be reloading, or be stuck — its log says which (${home.dir}/logs/gateway.log); svc mcp list shows the servers it runs, and svc mcp reload --wait <seconds> waits longer\n` +
        "svc: a later reload was refused while this one was still running, and does not change what this one applies:\nconfig.yaml: line 3: bad\n",
    );
  });
});

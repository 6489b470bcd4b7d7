import { existsSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentRunner } from "../../../src/actors/agent/runner.js";
import { startGatewayMcp } from "../../../src/actors/mcp/gatewayHub.js";
import { svcPaths } from "../../../src/config/paths.js";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => {
  vi.useRealTimers();
  home?.cleanup();
});

/**
 * The gateway's MCP status file (`mcp-cache/status.json`, what `svc mcp list` and `svc mcp reload` read) on a
 * disk that cannot take it (full; here a file in the place of mcp-cache/): each status change logged its own
 * WARN (one per server state change while the disk stayed full), and once there was room again the file kept
 * the old status until the next change, so `svc mcp list` showed stale states and `svc mcp reload` waited
 * for a reload it never saw reported.
 */
describe("the MCP status file while it cannot be written", () => {
  it("is reported once, tried again every 5 s, and written once it can be", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    home = tempHome();
    const paths = svcPaths(home.dir);
    writeFileSync(paths.mcpCache, "in the way");
    const log = captureLogger();
    const mcp = startGatewayMcp({
      paths,
      servers: {},
      approvals: "deny",
      logger: log.logger,
      runner: () => ({}) as AgentRunner,
    });
    for (const why of ["a", "b", "c"]) mcp.reloadRefused(why);
    const warned = () => log.messages().filter((m) => m.startsWith("[mcp] could not write the status file"));
    expect(warned()).toHaveLength(1);
    expect(warned()[0]).toMatch(/; it is tried again every 5 s \(said once until it is written\)$/);

    rmSync(paths.mcpCache);
    await vi.advanceTimersByTimeAsync(5000);
    expect(existsSync(paths.mcpCache)).toBe(true);
    expect(readStatusFile(paths.mcpCache)?.lastRefusedReload?.why).toBe("c");
    expect(log.messages()).toContain("[mcp] the status file is written again");
    await mcp.stop();
  });
});

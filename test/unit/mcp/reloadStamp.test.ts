import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentRunner } from "../../../src/actors/agent/runner.js";
import { startGatewayMcp } from "../../../src/actors/mcp/gatewayHub.js";
import { svcPaths } from "../../../src/config/paths.js";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { entry } from "../../integration/mcp/harness.js";

let home: TempHome;
afterEach(() => {
  vi.useRealTimers();
  home?.cleanup();
});

/**
 * The stamp of the gateway's last MCP reload report (`mcp-cache/status.json`), which `svc mcp reload`
 * compares with when it sent its signal: when the reload began, on the system clock as it reads then.
 */
describe("the MCP reload report's stamp", () => {
  it("is when each reload began, also after the system clock stepped back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    home = tempHome();
    const paths = svcPaths(home.dir);
    const mcp = startGatewayMcp({
      paths,
      servers: {},
      approvals: "deny",
      logger: captureLogger().logger,
      runner: () => ({}) as AgentRunner,
    });
    const stamp = () => readStatusFile(paths.mcpCache)?.lastReload?.at;
    vi.setSystemTime(new Date("2027-01-01T00:00:00.000Z"));
    await mcp.reload({});
    expect(stamp()).toBe("2027-01-01T00:00:00.000Z");
    // Stepped back (NTP put a clock that ran ahead right): the next report is not held at the earlier time,
    // which a command sending its signal now would take for its answer.
    vi.setSystemTime(new Date("2026-12-06T12:00:00.000Z"));
    await mcp.reload({});
    expect(stamp()).toBe("2026-12-06T12:00:00.000Z");
    // Two reloads at once end with one summary: the report is stamped with when the newer one began.
    vi.setSystemTime(new Date("2026-12-06T12:00:01.000Z"));
    const first = mcp.reload({});
    vi.setSystemTime(new Date("2026-12-06T12:00:02.000Z"));
    const second = mcp.reload({});
    vi.setSystemTime(new Date("2026-12-06T12:00:03.000Z"));
    await Promise.all([second, first]);
    expect(stamp()).toBe("2026-12-06T12:00:02.000Z");
    await mcp.stop();
  });
});

/**
 * A named profile's connections closed by a reload (no route bound to it any more) are reported `closed`, so
 * `svc mcp reload` tells them from servers a reload removed from mcp_servers (docs/mcp.md, svc mcp reload).
 */
describe("the report of a reload that closes a profile's connections", () => {
  it("is marked closed, unless a reload of servers replaced the close before it ran", async () => {
    home = tempHome();
    const paths = svcPaths(home.dir);
    const off = { off: entry({ command: "not-run", enabled: false }) };
    const mcp = startGatewayMcp({
      paths,
      servers: off,
      approvals: "deny",
      logger: captureLogger().logger,
      runner: () => ({}) as AgentRunner,
    });
    const report = () => readStatusFile(paths.mcpCache)?.lastReload;
    await mcp.close();
    expect(report()).toMatchObject({ removed: ["off"], closed: true });
    await mcp.reload(off);
    expect(report()?.added).toEqual(["off"]);
    expect(report()?.closed).toBeUndefined();
    // The close waits behind a reload, and is applied.
    await Promise.all([mcp.reload(off), mcp.close()]);
    expect(report()).toMatchObject({ removed: ["off"], closed: true });
    // Bound again before the waiting close ran: the servers stay, nothing was closed.
    await Promise.all([mcp.reload({}), mcp.close(), mcp.reload(off)]);
    expect(report()?.added).toEqual(["off"]);
    expect(report()?.closed).toBeUndefined();
    await mcp.stop();
  });
});

/**
 * A close under way (a server slow to stop) is published as it begins: the gateway reloads that profile no more,
 * so `svc mcp reload` waits for no report of it (docs/mcp.md, Named profiles).
 */
describe("the status file of a profile whose connections are being closed", () => {
  it("says since when while the close runs, and no more once it reported or a reload took the profile back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    home = tempHome();
    const paths = svcPaths(home.dir);
    const off = { off: entry({ command: "not-run", enabled: false }) };
    const mcp = startGatewayMcp({
      paths,
      servers: off,
      approvals: "deny",
      logger: captureLogger().logger,
      runner: () => ({}) as AgentRunner,
    });
    const status = () => readStatusFile(paths.mcpCache);
    vi.setSystemTime(new Date("2027-01-01T00:00:00.000Z"));
    const closing = mcp.close();
    expect(status()?.closing).toBe("2027-01-01T00:00:00.000Z");
    expect(status()?.servers.map((s) => s.name)).toEqual(["off"]);
    await closing;
    expect(status()?.closing).toBeUndefined();
    expect(status()?.lastReload?.closed).toBe(true);
    await mcp.reload(off);
    // Bound again while its servers close: the reload that takes them back ends the close at once.
    vi.setSystemTime(new Date("2027-01-01T00:00:05.000Z"));
    const closed = mcp.close();
    expect(status()?.closing).toBe("2027-01-01T00:00:05.000Z");
    const back = mcp.reload(off);
    expect(status()?.closing).toBeUndefined();
    await Promise.all([closed, back]);
    expect(status()?.closing).toBeUndefined();
    expect(status()?.lastReload?.closed).toBeUndefined();
    await mcp.stop();
  });
});

/**
 * A SIGHUP refused while a reload is still running (stopping servers) lands before that reload's report: the
 * refusal names when that reload began (`underway`), so `svc mcp reload` waits for its report before taking
 * the refusal for its own.
 */
describe("the stamp of a refused reload", () => {
  it("names when the reload still running began, and none when no reload runs", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    home = tempHome();
    const paths = svcPaths(home.dir);
    const mcp = startGatewayMcp({
      paths,
      servers: {},
      approvals: "deny",
      logger: captureLogger().logger,
      runner: () => ({}) as AgentRunner,
    });
    const refusal = () => readStatusFile(paths.mcpCache)?.lastRefusedReload;
    vi.setSystemTime(new Date("2027-01-01T00:00:00.000Z"));
    const running = mcp.reload({});
    vi.setSystemTime(new Date("2027-01-01T00:00:03.000Z"));
    mcp.reloadRefused("config.yaml: line 3: bad");
    expect(refusal()).toEqual({
      at: "2027-01-01T00:00:03.000Z",
      why: "config.yaml: line 3: bad",
      underway: "2027-01-01T00:00:00.000Z",
    });
    await running;
    expect(readStatusFile(paths.mcpCache)?.lastReload?.at).toBe("2027-01-01T00:00:00.000Z");
    vi.setSystemTime(new Date("2027-01-01T00:00:05.000Z"));
    mcp.reloadRefused("config.yaml: line 3: bad");
    expect(refusal()).toEqual({ at: "2027-01-01T00:00:05.000Z", why: "config.yaml: line 3: bad" });
    await mcp.stop();
  });
});

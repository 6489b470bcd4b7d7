import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { killPaused, okAndServers, reloadProcess, SILENT } from "./mcpReload.js";
import { type Foreground, killIfRunning, runForeground, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
const commands: ChildProcess[] = [];
afterEach(async () => {
  killPaused(commands);
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * svc mcp reload listed D, added with enabled: false beside S (which never answers), as "not connected: D
 * (added) — the gateway began stopping before it connected" when the gateway stopped during its wait for S:
 * the stop makes every server stopped, and D (no connect started) was taken for one whose connect the stop
 * ended. The command, paused, reads the status file once the stop has made D stopped.
 */
describe("svc mcp reload when the gateway stops while it waits, of a server the reload started no connect for", {
  timeout: 90_000,
}, () => {
  it("lists it as added, enabled: false, and only the one still connecting as not connected", async () => {
    home = tempHome();
    const dir = home.dir;
    const status = () => readStatusFile(join(dir, "mcp-cache"));
    home.write("config.yaml", okAndServers({}), 0o600);
    gateway = await runForeground(home, ["--port", "0"]);
    const pid = gateway.child.pid ?? 0;
    await waitFor(() => status()?.servers?.some((s) => s.state === "connected") === true, "ok connected");
    home.write(
      "config.yaml",
      okAndServers({
        S: { command: process.execPath, args: SILENT, connect_timeout: 600 },
        D: { command: process.execPath, args: [STDIO_FIXTURE, "legacy"], enabled: false },
      }),
      0o600,
    );
    const { child, result } = reloadProcess(home, commands);
    await waitFor(
      () =>
        status()?.lastReload?.added.join() === "S,D" &&
        status()?.servers?.find((s) => s.name === "S")?.state === "connecting",
      "S added and connecting",
    );
    signalProcess(child.pid ?? 0, "SIGSTOP");
    signalProcess(pid, "SIGTERM");
    await waitFor(
      () => status()?.servers?.find((s) => s.name === "D")?.state === "stopped",
      "D stopped by the gateway's stop",
    );
    signalProcess(child.pid ?? 0, "SIGCONT");
    const { code, stdout, stderr } = await result;

    expect(stdout).toBe(
      `Gateway (pid ${pid}) reloaded mcp_servers:\n  added: D (enabled: false, not connected)\n` +
        "  not connected: S (added) — the gateway began stopping before it connected\n  unchanged: ok\n",
    );
    expect(stderr).toMatch(/ before S had connected: the reload was applied/);
    expect(code).toBe(1);
    // Its stop ends S (which ignores SIGTERM) before it exits: no process of the test is left behind.
    await gateway.exited;
  });
});

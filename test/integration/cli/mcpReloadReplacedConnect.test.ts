import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { okAndServers, SILENT } from "./mcpReload.js";
import { type Foreground, killIfRunning, runForeground, type SvcResult, svc, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * A gateway of `at` with `ok` connected, and `svc mcp reload --wait <wait>` of a config that adds bh7
 * (SILENT, connect_timeout 600), resolved once bh7 is added and connecting.
 */
async function bh7Connecting(
  at: TempHome,
  wait: string,
): Promise<{ live: Foreground; reloading: Promise<SvcResult> }> {
  const dir = at.dir;
  at.write("config.yaml", okAndServers({}), 0o600);
  gateway = await runForeground(at, ["--port", "0"]);
  const live = gateway;
  await waitFor(
    () => readStatusFile(join(dir, "mcp-cache"))?.servers?.some((s) => s.state === "connected") === true,
    "ok connected",
  );
  at.write(
    "config.yaml",
    okAndServers({ bh7: { command: process.execPath, args: SILENT, connect_timeout: 600 } }),
    0o600,
  );
  const reloading = svc(at, ["mcp", "reload", "--wait", wait]);
  await waitFor(
    () =>
      readStatusFile(join(dir, "mcp-cache"))?.lastReload?.added.includes("bh7") === true &&
      readStatusFile(join(dir, "mcp-cache"))?.servers?.find((s) => s.name === "bh7")?.state === "connecting",
    "bh7 added and connecting",
  );
  return { live, reloading };
}

/**
 * svc mcp reload printed `added: bh7` (exit 0) of a server whose connect a later SIGHUP ended as it changed
 * the server's entry, while svc mcp list showed it connecting: the stopped connect was taken for one that
 * had ended well. The command waits for the later reload's connect of the server (within --wait) and lists
 * the server by how that ended; here its new connect_timeout of 1 s fails it.
 */
describe("svc mcp reload of an added server whose connect a later reload ended", { timeout: 90_000 }, () => {
  it("waits for the later reload's connect and lists the server by how it ended, not as added", async () => {
    home = tempHome();
    const { live, reloading } = await bh7Connecting(home, "20");
    home.write(
      "config.yaml",
      okAndServers({ bh7: { command: process.execPath, args: SILENT, connect_timeout: 1 } }),
      0o600,
    );
    signalProcess(live.child.pid as number, "SIGHUP");
    const result = await reloading;
    expect(result.stdout).not.toMatch(/ {2}added: bh7\n/);
    expect(result.stdout).toMatch(
      /\n {2}failed to connect: bh7 \(added\) — mcp_servers\.bh7: connect timed out after 1 s \(connect_timeout\)/,
    );
  });
});

/**
 * svc mcp reload printed `added: bh7` (exit 0) of a server a later SIGHUP removed before it connected: the
 * later report had no outcome for it, and a server with neither an outcome nor a status passed for connected.
 */
describe("svc mcp reload of an added server a later reload removed before it connected", {
  timeout: 90_000,
}, () => {
  it("lists it as not connected, and exits 1", async () => {
    home = tempHome();
    const { live, reloading } = await bh7Connecting(home, "30");
    home.write("config.yaml", okAndServers({}), 0o600);
    signalProcess(live.child.pid as number, "SIGHUP");
    const result = await reloading;
    expect(result.stdout).toBe(
      `Gateway (pid ${live.child.pid}) reloaded mcp_servers:\n` +
        "  not connected: bh7 (added) — a later reload removed it from mcp_servers before it connected\n" +
        "  unchanged: ok\n",
    );
    expect(result.stderr).toBe(
      "svc: bh7 never connected: a later reload removed it from mcp_servers first (svc mcp list shows the servers the gateway runs)\n",
    );
    expect(result.code).toBe(1);
    // bh7's process ended with its removal; the gateway's stop leaves nothing behind.
    signalProcess(live.child.pid ?? 0, "SIGTERM");
    await live.exited;
  });
});

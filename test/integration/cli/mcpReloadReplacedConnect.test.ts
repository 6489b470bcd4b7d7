import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalProcess } from "../../helpers/process.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";
import { okAndServers, SILENT } from "./mcpReload.js";
import {
  CLI_NODE_ARGS,
  type Foreground,
  killIfRunning,
  MAIN,
  runForeground,
  runNode,
  type SvcResult,
  svc,
  waitFor,
} from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * A gateway of `at` with `ok` connected, and `svc mcp reload --wait <wait>` of a config that adds bh7
 * (`args`, SILENT by default; connect_timeout 600), resolved once bh7 is added and connecting. With `clock`,
 * the reload runs as a process of its own whose monotonic clock (its --wait's) is that one.
 */
async function bh7Connecting(
  at: TempHome,
  wait: string,
  args: readonly string[] = SILENT,
  clock?: SteppedClock,
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
    okAndServers({ bh7: { command: process.execPath, args, connect_timeout: 600 } }),
    0o600,
  );
  const reload = ["mcp", "reload", "--wait", wait];
  const reloading =
    clock === undefined
      ? svc(at, reload)
      : runNode(at, [...CLI_NODE_ARGS, ...clock.nodeArgs, MAIN, ...reload], { env: clock.env });
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

/**
 * svc mcp reload printed `added: bh7 (still connecting: a later reload changed its entry before it connected, and
 * connects it again)` (exit 0) when its --wait ended while a later SIGHUP that removed bh7 was still stopping it
 * (its stop takes seconds), before that reload had reported: a stopped server whose connect the command waited
 * for was taken for one a later reload replaces. Until the later report comes, the command cannot tell which:
 * the server is not connected, and the command says a later reload ended its connect (exit 1). The gateway is
 * paused (SIGSTOP) once it shows bh7 stopped, so its report comes only after the command's wait.
 */
describe("svc mcp reload whose wait ends before a later reload that ended a connect has reported", {
  timeout: 90_000,
}, () => {
  it("lists the server as not connected, with why, says so on stderr, and exits 1", async ({
    onTestFinished,
  }) => {
    home = tempHome();
    const dir = home.dir;
    // SILENT, noting its pid: the gateway, paused, has its stop of bh7 to finish once resumed.
    const pidFile = join(dir, "bh7.pid");
    // The command's 10 s are stepped past once the gateway is paused, rather than waited out.
    const clock = steppedClock();
    const { live, reloading } = await bh7Connecting(
      home,
      "10",
      [
        "-e",
        `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); ${SILENT[1]}`,
      ],
      clock,
    );
    const bh7 = await pidInFile(pidFile);
    // (Should the test fail before the gateway ends it: bh7 ignores SIGTERM, and would outlive the gateway.)
    onTestFinished(() => void signalProcess(bh7, "SIGKILL"));
    home.write("config.yaml", okAndServers({}), 0o600);
    signalProcess(live.child.pid as number, "SIGHUP");
    await waitFor(
      () =>
        readStatusFile(join(dir, "mcp-cache"))?.servers?.find((s) => s.name === "bh7")?.state === "stopped",
      "bh7 stopped by the later reload",
    );
    signalProcess(live.child.pid as number, "SIGSTOP");
    // Its status file stays as it is now, which the command reads again (every 100 ms) before it sees the
    // wait ended.
    clock.step(10_000);
    let result: SvcResult;
    try {
      result = await reloading;
    } finally {
      signalProcess(live.child.pid as number, "SIGCONT");
    }
    expect(result.stdout).toBe(
      `Gateway (pid ${live.child.pid}) reloaded mcp_servers:\n` +
        "  not connected: bh7 (added) — a later reload ended its connect before it connected (that reload had not reported when the wait ended)\n" +
        "  unchanged: ok\n",
    );
    expect(result.stderr).toBe(
      `svc: bh7 did not connect: a later reload ended its connect, and had not reported within 10 s (--wait) — svc mcp list shows whether it connects it again\n`,
    );
    expect(result.code).toBe(1);
    // The later reload removed it, and ends its process.
    await waitFor(
      () => readStatusFile(join(dir, "mcp-cache"))?.lastReload?.removed.includes("bh7") === true,
      "the later reload's report",
    );
    await waitFor(() => !alive(bh7), "bh7's process ended");
    signalProcess(live.child.pid ?? 0, "SIGTERM");
    await live.exited;
  });
});

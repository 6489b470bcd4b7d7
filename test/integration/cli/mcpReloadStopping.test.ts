import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { killPaused, reloadProcess } from "./mcpReload.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
const commands: ChildProcess[] = [];
afterEach(async () => {
  killPaused(commands);
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * The fixture server, or with `HANG: "1"` in `env` one that never answers `initialize` (it ends once its
 * stdin closes): a reload that sets it connects a server that is still connecting when the gateway stops.
 */
function hangingWhenTold(env: Record<string, string>): Record<string, unknown> {
  const code = `if (process.env.HANG === "1") process.stdin.resume(); else import(${JSON.stringify(STDIO_FIXTURE)})`;
  return { command: process.execPath, args: ["-e", code, "_"], env };
}

/** An agent command that runs until the gateway (its parent) is gone: a run the stop's drain waits for. */
const runUntilGatewayGone = [
  process.execPath,
  "-e",
  // Its parent gone, it is re-parented: process.ppid (read anew each time) changes.
  "const p = process.ppid; setInterval(() => { if (process.ppid !== p) process.exit(0) }, 100)",
];

function config(hang: "0" | "1"): string {
  return stringify({
    ...cliConfig(
      { r: { secret: "INSECURE_NO_AUTH" } },
      { mcp_servers: { slow: hangingWhenTold({ HANG: hang }) } },
    ),
    agent: { provider: "command", command: runUntilGatewayGone },
    gateway: { drain_timeout_seconds: 60 },
  });
}

const gatewayLog = () => readFileSync(join(home?.dir ?? "", "logs", "gateway.log"), "utf8");

/** A gateway of `home` whose server `slow` connected; the reload the test makes sets it hanging. */
async function connectedGateway(): Promise<Foreground> {
  home = tempHome();
  home.write("config.yaml", config("0"), 0o600);
  gateway = await runForeground(home);
  await waitFor(() => gatewayLog().includes("[mcp] slow: connected"), "the server's connect");
  home.write("config.yaml", config("1"), 0o600);
  return gateway;
}

/**
 * A stop that began before the server a reload (re)started had connected: `svc mcp reload` printed
 * "reconnected (changed): slow" and exited 0, and the gateway's log said nothing of the reconnect the stop
 * ended.
 */
describe("svc mcp reload when the gateway begins stopping before the server it reconnects has connected", {
  timeout: 60_000,
}, () => {
  it("ends the wait at the stop, lists the server as not connected, and exits 1", async () => {
    const running = await connectedGateway();
    const pid = running.child.pid ?? 0;
    // A run under way: the stop's drain waits for it, so the server is still connecting while it stops.
    const accepted = await postJson(`http://127.0.0.1:${running.port}/webhooks/r`, { n: 1 });
    expect(accepted.status).toBe(202);
    const reloading = svc(home as TempHome, ["mcp", "reload", "--wait", "30"]);
    await waitFor(() => gatewayLog().includes("[mcp] configuration reloaded"), "the reload's report");
    signalProcess(pid, "SIGTERM");
    const result = await reloading;

    expect(result.stdout).toBe(
      `Gateway (pid ${pid}) reloaded mcp_servers:\n  not connected: slow (changed) — the gateway began stopping before it connected\n`,
    );
    // gateway.json says since when: it is the gateway's own time.
    expect(result.stderr).toMatch(/^svc: the gateway \(pid \d+\) began stopping \(since [^)]+\) before /);
    expect(result.stderr.replace(/ \(since [^)]+\)/, "")).toBe(
      `svc: the gateway (pid ${pid}) began stopping before slow had connected: the reload was applied, and the next start (svc gateway start) connects it as ${home?.dir}/config.yaml says\n`,
    );
    expect(result.code).toBe(1);
  });

  it("says so too when the stop ended the connect before the command looked again, and the gateway logs it", async () => {
    const running = await connectedGateway();
    const pid = running.child.pid ?? 0;
    const reload = reloadProcess(home as TempHome, commands);
    await waitFor(() => gatewayLog().includes("[mcp] configuration reloaded"), "the reload's report");
    // The command looks again only once the gateway has stopped the server and exited.
    signalProcess(reload.child.pid ?? 0, "SIGSTOP");
    signalProcess(pid, "SIGTERM");
    await running.exited;
    expect(gatewayLog()).toContain(
      "[mcp] slow: the reload's reconnect was ended by the gateway's stop before it connected — the next start connects it",
    );
    signalProcess(reload.child.pid ?? 0, "SIGCONT");
    const result = await reload.result;

    expect(result.stdout).toBe(
      `Gateway (pid ${pid}) reloaded mcp_servers:\n  not connected: slow (changed) — the gateway began stopping before it connected\n`,
    );
    // gateway.json, which said since when it stopped, went with the gateway.
    expect(result.stderr).toBe(
      `svc: the gateway (pid ${pid}) began stopping before slow had connected: the reload was applied, and the next start (svc gateway start) connects it as ${home?.dir}/config.yaml says\n`,
    );
    expect(result.code).toBe(1);
  });
});

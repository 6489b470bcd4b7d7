import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * A stdio server slow to stop: it ignores SIGTERM and lingers once its stdin closes, so a reload that
 * changes it takes the stop's whole grace (its SIGKILL). `stopped` is written when its stdin closes.
 */
function slowToStop(stopped: string, env: Record<string, string>): Record<string, unknown> {
  const code = `process.on("SIGTERM", () => {}); process.stdin.on("end", () => require("fs").writeFileSync(${JSON.stringify(stopped)}, "")); import(${JSON.stringify(STDIO_FIXTURE)})`;
  // `node -e` gives the fixture its arguments from argv[2] on: the first one is a placeholder.
  return { command: process.execPath, args: ["-e", code, "_", "--linger-ms", "60000"], env };
}

describe("svc mcp reload while an earlier reload is still stopping a server", { timeout: 60_000 }, () => {
  it("prints its own reload's summary, not the earlier one that ended after its signal", async () => {
    home = tempHome();
    const stopped = join(home.dir, "stopped");
    const config = (env: Record<string, string>, more: Record<string, unknown> = {}) =>
      stringify(cliConfig({}, { mcp_servers: { slow: slowToStop(stopped, env), ...more } }));
    home.write("config.yaml", config({ X: "1" }), 0o600);
    gateway = await runForeground(home);
    await waitFor(() => gateway?.stdout().includes("[mcp] slow: connected") === true, "the server's connect");
    const pid = gateway.child.pid ?? 0;
    // The command's modules loaded now, so it sends its signal while the first reload still stops the server.
    expect((await svc(home, ["mcp", "list"])).code).toBe(0);

    // The first reload changes the slow server and is still stopping it when the command sends its own.
    // (A connect tried again at start may have left the file: only this stop's counts.)
    rmSync(stopped, { force: true });
    home.write("config.yaml", config({ X: "2" }), 0o600);
    signalProcess(pid, "SIGHUP");
    await waitFor(() => existsSync(stopped), "the first reload's stop of the server");
    // Its own reload stops the slow server again, so its report comes well after the first one's.
    home.write(
      "config.yaml",
      config({ X: "3" }, { gone: { command: join(home.dir, "no-such-server") } }),
      0o600,
    );
    const result = await svc(home, ["mcp", "reload", "--wait", "30"]);

    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(`Gateway (pid ${pid}) reloaded mcp_servers:\n`);
    expect(result.stdout).toContain("  failed to connect: gone (added) — ");
    expect(result.stdout).toContain("  reconnected (changed): slow\n");
    // The reload was applied: a server that failed to connect is retried with its backoff.
    expect(result.code).toBe(0);
  });
});

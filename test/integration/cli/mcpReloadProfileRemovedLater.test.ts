import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  home?.cleanup();
});

// A stdio server that never answers (and ignores SIGTERM).
const SILENT = ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"];

/** Multiplexing on, a route bound to profile work, and one stdio server whose T comes from each profile's .env. */
const config = (servers: Record<string, unknown>) =>
  stringify(
    cliConfig(
      { team: { secret: "INSECURE_NO_AUTH", profile: "work", deliver: "log" } },
      {
        gateway: { multiplex_profiles: true },
        agent: { provider: "command", command: ["cat"] },
        mcp_servers: {
          fx: { command: process.execPath, args: [STDIO_FIXTURE], env: { T: "${T}" } },
          ...servers,
        },
      },
    ),
  );

const statusOf = (dir: string, profile?: string) =>
  readStatusFile(
    profile === undefined ? join(dir, "mcp-cache") : join(dir, "profiles", profile, "mcp-cache"),
  );

/**
 * svc mcp reload printed a named profile's summary from a later reload's report: bh7, added, then removed by
 * another SIGHUP before it connected, was left out of profile work's lines altogether (and the command exited
 * 0 for it). The profile's summary is of the reload the command asked for, as the default profile's is.
 */
describe("svc mcp reload of a server a later reload removed, in a named profile", {
  timeout: 120_000,
}, () => {
  it("lists it as not connected under the profile, names it on stderr with the profile, and exits 1", async () => {
    home = tempHome();
    const dir = home.dir;
    home.write("config.yaml", config({}), 0o600);
    home.write(".env", "T=d\n", 0o600);
    home.write("profiles/work/.env", "T=w\n", 0o600);
    gateway = await runForeground(home, ["--port", "0"]);
    const live = gateway;
    expect((await postJson(`http://127.0.0.1:${live.port}/p/work/webhooks/team`, {})).status).toBe(202);
    await waitFor(
      () => statusOf(dir, "work")?.servers?.find((s) => s.name === "fx")?.state === "connected",
      "work's fx connected",
    );
    home.write(
      "config.yaml",
      config({ bh7: { command: process.execPath, args: SILENT, connect_timeout: 600 } }),
      0o600,
    );
    const reloading = svc(home, ["mcp", "reload", "--wait", "30"]);
    await waitFor(
      () =>
        statusOf(dir, "work")?.servers?.find((s) => s.name === "bh7")?.state === "connecting" &&
        statusOf(dir)?.servers?.find((s) => s.name === "bh7")?.state === "connecting",
      "bh7 connecting in both profiles",
    );
    // The command reads the status files every 100 ms: a few of its reads see both first reports.
    await new Promise((resolve) => setTimeout(resolve, 500));
    home.write("config.yaml", config({}), 0o600);
    signalProcess(live.child.pid as number, "SIGHUP");
    const result = await reloading;
    expect(result.stdout).toContain(
      "Profile work (its own .env and logins):\n" +
        "  not connected: bh7 (added) — a later reload removed it from mcp_servers before it connected\n",
    );
    expect(result.stderr).toBe(
      "svc: bh7, bh7 (profile work) never connected: a later reload removed them from mcp_servers first (svc mcp list shows the servers the gateway runs)\n",
    );
    expect(result.code).toBe(1);
    signalProcess(live.child.pid ?? 0, "SIGTERM");
    await live.exited;
  });
});

import { writeFileSync } from "node:fs";
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
  // Stopped, not killed: its stop ends the stdio servers, bh7 too should a test fail before making its gate.
  if (gateway !== undefined && gateway.child.exitCode === null) {
    signalProcess(gateway.child.pid ?? 0, "SIGTERM");
    await Promise.race([gateway.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * Multiplexing on, route team (bound to profile work while `bound`), fx, and with `bh7` the fixture server
 * started once the gate file exists (made by the test), so its connect is under way as long as the test wants.
 * Each profile's `.env` sets a variable (an emptied one is refused only then).
 */
const config = (dir: string, options: { bound: boolean; bh7: boolean }) =>
  stringify(
    cliConfig(
      {
        team: { secret: "INSECURE_NO_AUTH", deliver: "log", ...(options.bound ? { profile: "work" } : {}) },
      },
      {
        gateway: { multiplex_profiles: true },
        agent: { provider: "command", command: ["cat"] },
        mcp_servers: {
          fx: { command: process.execPath, args: [STDIO_FIXTURE] },
          ...(options.bh7
            ? {
                bh7: {
                  command: "sh",
                  args: [
                    "-c",
                    `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" "$2"`,
                    join(dir, "gate"),
                    process.execPath,
                    STDIO_FIXTURE,
                  ],
                  connect_timeout: 600,
                },
              }
            : {}),
        },
      },
    ),
  );

const statusOf = (dir: string, profile?: string) =>
  readStatusFile(
    profile === undefined ? join(dir, "mcp-cache") : join(dir, "profiles", profile, "mcp-cache"),
  );
const stateIn = (dir: string, server: string, profile?: string) =>
  statusOf(dir, profile)?.servers?.find((s) => s.name === server)?.state;

/**
 * A gateway of `at` whose profile work has opened its connections (fx connected there), and `svc mcp reload
 * --wait 30` of a config adding bh7, resolved once both profiles report bh7 added and connecting, and the
 * command has read those reports (it reads the status files every 100 ms).
 */
async function bh7ConnectingInWork(
  at: TempHome,
): Promise<{ live: Foreground; reloading: Promise<Awaited<ReturnType<typeof svc>>> }> {
  const dir = at.dir;
  at.write("config.yaml", config(dir, { bound: true, bh7: false }), 0o600);
  at.write(".env", "T=d\n", 0o600);
  at.write("profiles/work/.env", "T=w\n", 0o600);
  gateway = await runForeground(at, ["--port", "0"]);
  const live = gateway;
  expect((await postJson(`http://127.0.0.1:${live.port}/p/work/webhooks/team`, {})).status).toBe(202);
  await waitFor(() => stateIn(dir, "fx", "work") === "connected", "work's fx connected");
  at.write("config.yaml", config(dir, { bound: true, bh7: true }), 0o600);
  const reloading = svc(at, ["mcp", "reload", "--wait", "30"]);
  await waitFor(
    () =>
      statusOf(dir, "work")?.lastReload?.added.includes("bh7") === true &&
      statusOf(dir)?.lastReload?.added.includes("bh7") === true &&
      stateIn(dir, "bh7", "work") === "connecting" &&
      stateIn(dir, "bh7") === "connecting",
    "bh7 added and connecting in both profiles",
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { live, reloading };
}

/**
 * svc mcp reload said of bh7 in profile work "a later reload removed it from mcp_servers before it connected"
 * (exit 1) when a later reload only closed the profile's connections (no route bound to it any more; bh7
 * still in mcp_servers): a server the later report did not configure was taken for one removed. The profile
 * is said to have its connections closed, as when the reload the command asked for closes them.
 */
describe("svc mcp reload when a later reload closes a named profile's connections", {
  timeout: 120_000,
}, () => {
  it("says the profile's connections are closed, not that bh7 was removed, and exits 0", async () => {
    home = tempHome();
    const dir = home.dir;
    const { live, reloading } = await bh7ConnectingInWork(home);
    home.write("config.yaml", config(dir, { bound: false, bh7: true }), 0o600);
    signalProcess(live.child.pid as number, "SIGHUP");
    await waitFor(() => statusOf(dir, "work")?.servers?.length === 0, "profile work's connections closed");
    // The default profile's bh7 connects.
    writeFileSync(join(dir, "gate"), "");
    const result = await reloading;
    expect(result.stdout).toBe(
      `Gateway (pid ${live.child.pid}) reloaded mcp_servers:\n` +
        "  added: bh7\n" +
        "  unchanged: fx\n" +
        "Profile work: its connections are closed — no route, subscription or cron job is bound to it any more (a later run of it opens them again)\n",
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});

/**
 * svc mcp reload said "profile work's connections keep their values: the gateway refused their reload" (exit
 * 1) when the reload it asked for was applied to profile work and reported, and a later SIGHUP's was refused
 * (work's .env emptied): any refusal since the signal was taken for the command's, whatever report came
 * before it. The profile's summary is of the reload applied, and the later refusal is said apart.
 */
describe("svc mcp reload when a later reload of a named profile is refused", { timeout: 120_000 }, () => {
  it("lists the profile's reload as applied, says the later one was refused, and exits 0", async () => {
    home = tempHome();
    const dir = home.dir;
    const { live, reloading } = await bh7ConnectingInWork(home);
    const reported = statusOf(dir, "work")?.lastReload?.at;
    writeFileSync(join(dir, "profiles/work/.env"), "");
    signalProcess(live.child.pid as number, "SIGHUP");
    await waitFor(
      () => statusOf(dir, "work")?.lastRefusedReload !== undefined,
      "profile work's later reload refused",
    );
    expect(statusOf(dir, "work")?.lastReload?.at).toBe(reported);
    writeFileSync(join(dir, "gate"), "");
    const result = await reloading;
    expect(result.stdout).toContain(
      "Profile work (its own .env and logins):\n  added: bh7\n  unchanged: fx\n",
    );
    expect(result.stdout).toContain(
      `  a later reload was refused for this profile, whose connections keep what this one applied: ${join(dir, "profiles/work/.env")}: is empty`,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(stateIn(dir, "bh7", "work")).toBe("connected");
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome;
let gateway: Foreground | undefined;

/** config.yaml with multiplexing on, a `cat` agent and one stdio server whose T comes from the profile's `.env`. */
function writeConfig(routes: Record<string, unknown>): void {
  home.write(
    "config.yaml",
    stringify(
      cliConfig(routes, {
        gateway: { multiplex_profiles: true },
        agent: { provider: "command", command: ["cat"] },
        mcp_servers: { fx: { command: process.execPath, args: [STDIO_FIXTURE], env: { T: "${T}" } } },
      }),
    ),
    0o600,
  );
}

const workState = () => {
  try {
    const file = JSON.parse(
      readFileSync(join(home.dir, "profiles", "work", "mcp-cache", "status.json"), "utf8"),
    ) as { servers: Array<{ name: string; state: string }> };
    return file.servers.find((s) => s.name === "fx")?.state;
  } catch {
    return undefined;
  }
};

/**
 * One gateway for both: profile `work` bound to the route `team`, its server connected with T from
 * `profiles/work/.env`. The first test leaves that as it found it (its `.env` written whole again, same value).
 */
const workPid = () => (gateway as Foreground).child.pid;
beforeAll(async () => {
  home = tempHome();
  writeConfig({ team: { secret: "INSECURE_NO_AUTH", profile: "work", deliver: "log" } });
  home.write(".env", "T=default-value\n", 0o600);
  home.write("profiles/work/.env", "T=work-1\n", 0o600);
  gateway = await runForeground(home);
  expect((await postJson(`http://127.0.0.1:${gateway.port}/p/work/webhooks/team`, {})).status).toBe(202);
  await waitFor(() => workState() === "connected", "profile work's connection");
}, 60_000);
afterAll(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
});

/**
 * A named profile's `.env` left empty while its connections are open (an editor truncating it mid-save):
 * as the gateway does for its own `.env`, the reload keeps that profile's servers with the values they
 * have, rather than restarting them with the literal `${T}`, and `svc mcp reload` says so.
 */
describe("svc mcp reload with a named profile's .env emptied", () => {
  it("refuses that profile's part, naming the file, and its server keeps its values", async () => {
    home.write("profiles/work/.env", "", 0o600);
    const emptied = await svc(home, ["mcp", "reload"]);
    expect(emptied.code).toBe(1);
    expect(emptied.stdout).toBe(
      `Gateway (pid ${workPid()}) reloaded mcp_servers:\n  unchanged: fx\n  nothing changed\n`,
    );
    expect(emptied.stderr).toBe(
      `svc: profile work's connections keep their values: the gateway refused their reload — fix what is named below and run svc mcp reload again:\n${join(home.dir, "profiles", "work", ".env")}: is empty (no variable in it) — the running config read 1 variable from it: write it whole and reload again (an editor may still have been writing it), or remove the file to run without it\n`,
    );

    // Written whole again with the same value: nothing changed for the server, which kept T all along.
    home.write("profiles/work/.env", "T=work-1\n", 0o600);
    const restored = await svc(home, ["mcp", "reload"]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toBe(
      `Gateway (pid ${workPid()}) reloaded mcp_servers:\n  unchanged: fx\n  nothing changed\nProfile work (its own .env and logins):\n  unchanged: fx\n  nothing changed\n`,
    );
  }, 60_000);
});

/**
 * A reload renders each profile's entries with its own `.env` (docs/mcp.md, Interpolation): a value
 * rotated in `profiles/work/.env` reconnects only that profile's server. `svc mcp reload` says so under the
 * default profile's summary, rather than `nothing changed` alone; and a profile the reload leaves with
 * nothing bound to it is said to have its connections closed.
 */
describe("svc mcp reload with a named profile's own connections", () => {
  it("prints the profile's reload under the default profile's, and that its connections closed once nothing is bound to it", async () => {
    home.write("profiles/work/.env", "T=work-2\n", 0o600);
    const rotated = await svc(home, ["mcp", "reload"]);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toBe(
      `Gateway (pid ${workPid()}) reloaded mcp_servers:\n  unchanged: fx\n  nothing changed\nProfile work (its own .env and logins):\n  reconnected (changed): fx\n`,
    );

    writeConfig({ mine: { secret: "INSECURE_NO_AUTH", deliver: "log" } });
    const unbound = await svc(home, ["mcp", "reload"]);
    expect(unbound.code).toBe(0);
    expect(unbound.stdout).toBe(
      `Gateway (pid ${workPid()}) reloaded mcp_servers:\n  unchanged: fx\n  nothing changed\nProfile work: its connections are closed — no route, subscription or cron job is bound to it any more (a later run of it opens them again)\n`,
    );

    // Closed, it is not reloaded again: the next reload prints the default profile's summary alone.
    const again = await svc(home, ["mcp", "reload"]);
    expect(again.stdout).toBe(
      `Gateway (pid ${workPid()}) reloaded mcp_servers:\n  unchanged: fx\n  nothing changed\n`,
    );
  }, 60_000);
});

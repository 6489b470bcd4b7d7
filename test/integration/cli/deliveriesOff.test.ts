import { existsSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { HISTORY_RETENTION_MS } from "../../../src/io/stores/deliveryHistory.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

let home: TempHome;
let gateway: Foreground | undefined;
let second: TempHome | undefined;
let secondGateway: Foreground | undefined;
afterEach(async () => {
  await Promise.all([killIfRunning(gateway), killIfRunning(secondGateway)]);
  gateway = undefined;
  secondGateway = undefined;
  home.cleanup();
  second?.cleanup();
  second = undefined;
});

describe("svc webhook deliveries with nothing recorded", () => {
  it("says that delivery_history is off when config.yaml turned it off, and how to turn it on", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", delivery_history: false } } }),
    );
    const res = await svc(home, ["webhook", "deliveries"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      `No deliveries recorded: platforms.webhook.delivery_history is false in ${home.dir}/config.yaml, so the gateway records none — set it to true and restart the gateway.\n`,
    );
    // --json keeps stdout to the JSON (an empty list), and says why on stderr, which a script's log shows.
    const json = await svc(home, ["webhook", "deliveries", "--json"]);
    expect(json).toEqual({
      code: 0,
      stdout: "[]\n",
      stderr: `Note: no deliveries recorded: platforms.webhook.delivery_history is false in ${home.dir}/config.yaml, so the gateway records none — set it to true and restart the gateway.\n`,
    });
  });

  it("names the running gateway's delivery_history when config.yaml changed it since its start (a change takes a restart)", async () => {
    const withHistory = (on: boolean) => {
      const config = cliConfig({ r: { secret: "INSECURE_NO_AUTH" } });
      (config.platforms as { webhook: Record<string, unknown> }).webhook.delivery_history = on;
      return stringify(config);
    };
    // Two gateways started at once: one with the history off, one with it on; then each file is turned the
    // other way (what a reload only warns about: it takes effect after a restart).
    home = tempHome();
    const onHome = tempHome();
    second = onHome;
    home.write("config.yaml", withHistory(false), 0o600);
    onHome.write("config.yaml", withHistory(true), 0o600);
    [gateway, secondGateway] = await Promise.all([runForeground(home), runForeground(onHome)]);
    home.write("config.yaml", withHistory(true), 0o600);
    onHome.write("config.yaml", withHistory(false), 0o600);

    const pid = gateway.child.pid;
    const off = await svc(home, ["webhook", "deliveries"]);
    expect(off.stdout).toBe(
      `No deliveries recorded: the running gateway (pid ${pid}) started with platforms.webhook.delivery_history false, so it records none — ${home.dir}/config.yaml sets it to true now, which takes effect after a restart (svc gateway stop, then svc gateway start).\n`,
    );
    // So does redeliver of an ID it cannot find.
    const missing = await svc(home, ["webhook", "redeliver", "delivery-reload-1"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `in the recent history (svc webhook deliveries lists them; records are kept 7 days, and no more than the last ~32 MiB of them) — the running gateway (pid ${pid}) started with platforms.webhook.delivery_history false, so it records none: ${home.dir}/config.yaml sets it to true now, which takes effect after a restart (svc gateway stop, then svc gateway start)`,
    );

    // Started with it on: it records until it restarts, whatever the file says now.
    const on = await svc(onHome, ["webhook", "deliveries", "--json"]);
    expect(on).toEqual({
      code: 0,
      stdout: "[]\n",
      stderr: `Note: no deliveries recorded yet: the running gateway (pid ${secondGateway.child.pid}) records them until it restarts — platforms.webhook.delivery_history is false in ${onHome.dir}/config.yaml, which takes effect at its next start.\n`,
    });
    const notYet = await svc(onHome, ["webhook", "redeliver", "delivery-reload-2"]);
    expect(notYet.code).toBe(2);
    expect(notYet.stderr).not.toContain("records none");
  });

  it("svc webhook redeliver of an ID it cannot find says that delivery_history is off (exit 2)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", delivery_history: false } } }),
    );
    const res = await svc(home, ["webhook", "redeliver", "delivery-opsprobe-1"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `no delivery "delivery-opsprobe-1" in the recent history (svc webhook deliveries lists them; records are kept 7 days, and no more than the last ~32 MiB of them) — platforms.webhook.delivery_history is false in ${home.dir}/config.yaml, so the gateway records none: set it to true and restart the gateway`,
    );
  });

  it("a start with delivery_history off still removes a history file past its retention, and keeps a recent one to list", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", delivery_history: false } } }),
      0o600,
    );
    const line = (id: string, at: number) =>
      `${JSON.stringify({ kind: "request", id, at: new Date(at).toISOString(), route: "pr", status: 401, outcome: "Invalid signature" })}\n`;
    const day = 24 * 60 * 60 * 1000;
    const old = Date.now() - HISTORY_RETENTION_MS - day;
    home.write("deliveries/history.1.jsonl", line("old-1", old), 0o600);
    home.write("deliveries/history.jsonl", line("recent-1", Date.now() - day), 0o600);
    const previous = join(home.dir, "deliveries", "history.1.jsonl");
    utimesSync(previous, old / 1000, old / 1000);
    const gateway = await startGatewayInHome(home);
    await gateway.stop();
    // The payloads senders sent are not kept past the retention because the recording was turned off.
    expect(existsSync(previous)).toBe(false);
    const listed = await svc(home, ["webhook", "deliveries", "--json"]);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((r) => r.id)).toEqual(["recent-1"]);
  });

  it("refuses a --limit that is not written in digits (exit 2), as it refuses 0", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    for (const limit of ["0x10", "1e3", " 3", "0"]) {
      const res = await svc(home, ["webhook", "deliveries", "--limit", limit]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`--limit: expected a whole number of at least 1, got "${limit}"`);
    }
    expect((await svc(home, ["webhook", "deliveries", "--limit", "3"])).code).toBe(0);
  });

  it("with the history on, says where the records come from", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { pr: { secret: "s" } } } },
      }),
    );
    const res = await svc(home, ["webhook", "deliveries", "pr"]);
    expect(res.stdout).toBe(
      "No deliveries recorded for pr (the gateway records them with platforms.webhook.delivery_history, on by default).\n",
    );
    // `history` is another name for it.
    expect(await svc(home, ["webhook", "history", "pr"])).toEqual(res);
  });

  it("a name that is no route, no subscription and not in the history is refused as a typo (exit 2), naming the routes", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { github: { secret: "s" } } } },
      }),
    );
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ stripe: { secret: "whsec_x", prompt: "p", enabled: true } }),
    );
    const typo = await svc(home, ["webhook", "deliveries", "githb"]);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toContain(
      'no route or subscription is named "githb" and none by that name is in the recent history — did you mean github? (routes of config.yaml: github; svc webhook list shows the subscriptions)',
    );
    // A subscription's name misspelt is named too; a name like none keeps the list alone.
    expect((await svc(home, ["webhook", "deliveries", "strpe"])).stderr).toContain("did you mean stripe?");
    expect((await svc(home, ["webhook", "deliveries", "payments"])).stderr).toContain(
      'named "payments" and none by that name is in the recent history — routes of config.yaml: github;',
    );
    // A subscription's name is a name it serves: nothing recorded yet is said as such.
    const sub = await svc(home, ["webhook", "deliveries", "stripe"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("No deliveries recorded for stripe");
  });
});

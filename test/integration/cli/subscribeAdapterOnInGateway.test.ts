import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

let home: TempHome;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home.cleanup();
});

/**
 * A gateway started with WEBHOOK_ENABLED=true in its own environment (a systemd unit's Environment=, a
 * container's -e) and a config.yaml that leaves platforms.webhook.enabled unset listens and serves
 * subscriptions; `svc webhook subscribe` run from a shell without that variable refused ("a subscription
 * would reach nothing"), and `list` said nothing receives them, judging by its own environment alone.
 */
describe("svc webhook subscribe|list while this SVC_HOME's gateway runs with the adapter on that the command's configuration turns off", {
  timeout: 90_000,
}, () => {
  it("writes the record, prints the running gateway's URL and notes that a restart under this configuration turns the adapter off", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { host: "127.0.0.1", port: 0 } }, agent: { provider: "echo" } }),
    );
    gateway = await runForeground(home, [], { WEBHOOK_ENABLED: "true" });
    const pid = gateway.child.pid;
    const offReason = `${join(home.dir, "config.yaml")}: platforms.webhook.enabled is not set, and false is its default in a config.yaml`;
    const note = `Note: the webhook adapter is off in this command's configuration (${offReason}), but the running gateway (pid ${pid}) listens on 127.0.0.1:${gateway.port} and serves the subscriptions: it was started with the adapter on (WEBHOOK_ENABLED=true in its own environment, or a config.yaml changed since) — a restart under this config.yaml and this environment would turn it off; to keep it on: svc gateway setup --enable\n`;

    const subscribed = await svc(home, ["webhook", "subscribe", "sysd"]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toContain(
      `Subscribed sysd\nURL:    http://127.0.0.1:${gateway.port}/webhooks/sysd\n`,
    );
    expect(subscribed.stderr).toContain(note);
    expect(subscribed.stderr).not.toContain("would reach nothing");
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(true);

    // The gateway serves it.
    const sent = await svc(home, ["webhook", "test", "sysd"]);
    expect(sent).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });

    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.stdout.split("\n")[1]).toMatch(/^sysd\s.*\syes\s*$/);
    expect(listed.stderr).toContain(note);
    expect(listed.stderr).not.toContain("nothing receives them");

    // Once it stopped, nothing serves a new subscription: refused, nothing written.
    await killIfRunning(gateway);
    gateway = undefined;
    const refused = await svc(home, ["webhook", "subscribe", "other"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `svc: the webhook adapter is off (${offReason}), so a subscription would reach nothing; nothing was written`,
    );
  });

  it("a running gateway whose gateway.json cannot be read is not taken to listen on config.yaml's port", async () => {
    home = tempHome();
    // The adapter off in its configuration and its environment: it listens on nothing.
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false, host: "127.0.0.1", port: 8644 } },
        mcp_servers: { idle: { command: "cat", lazy: true } },
      }),
    );
    try {
      expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
      // Removed, or not yet written by a gateway that is starting.
      rmSync(join(home.dir, "gateway.json"));
      const refused = await svc(home, ["webhook", "subscribe", "other"]);
      expect(refused.stderr).not.toContain("listens on 127.0.0.1:8644");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("so a subscription would reach nothing; nothing was written");
    } finally {
      expect((await svc(home, ["gateway", "stop"])).code).toBe(0);
    }
  });
});

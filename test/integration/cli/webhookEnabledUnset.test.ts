import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("the 'adapter not enabled' note when config.yaml does not write enabled", {
  timeout: 90_000,
}, () => {
  it("says the key is not set (false by default in a config.yaml), not that it is false", async () => {
    home = tempHome();
    home.write("config.yaml", "agent:\n  provider: echo\n");
    const res = await svc(home, ["webhook", "list"]);
    expect(res.stderr).toContain(
      `(${join(home.dir, "config.yaml")}: platforms.webhook.enabled is not set, and false is its default in a config.yaml)`,
    );
  });
});

describe("svc webhook subscribe with the webhook adapter off", { timeout: 90_000 }, () => {
  it("writes nothing, says how to enable the adapter and exits 1", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  x:\n    command: node\n");
    const res = await svc(home, ["webhook", "subscribe", "gh"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(
      `svc: the webhook adapter is off (${join(home.dir, "config.yaml")}: platforms.webhook.enabled is not set, and false is its default in a config.yaml), so a subscription would reach nothing; nothing was written — enable it first (svc gateway setup --enable), then run this command again`,
    );
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });
});

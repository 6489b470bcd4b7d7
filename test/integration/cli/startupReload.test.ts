import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, type Foreground, killIfRunning, runForeground } from "./svc.js";

const HUP_AFTER_READ = join(import.meta.dirname, "../../helpers/hupAfterConfigRead.mjs");

/**
 * A SIGHUP that comes while the gateway starts, after the start read config.yaml (an edit and `svc mcp
 * reload` right after `svc gateway start`, a slow start with ingress threads or a Redis connection): the
 * start never saw the edit, so the reload is owed, and made once the gateway has started.
 */
describe("svc gateway run: a SIGHUP during startup, after config.yaml was read", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  const signed = (port: number, secret: string) => {
    const body = JSON.stringify({ action: "opened" });
    return postJson(`http://127.0.0.1:${port}/webhooks/r`, body, {
      "x-github-event": "issues",
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    });
  };

  it("is applied once the gateway has started: the edited secret answers, the old one is refused", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "old-secret" } })));
    home.write("config.yaml.next", stringify(cliConfig({ r: { secret: "new-secret" } })));
    gateway = await runForeground(home, ["--port", "0"], {}, ["--import", HUP_AFTER_READ]);
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    const deadline = Date.now() + 15_000;
    while (!log().includes("[webhook] Reloaded") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(log()).toContain(
      `[gateway] SIGHUP received during startup, after ${join(home.dir, "config.yaml")} was read: reloading it now that the gateway has started`,
    );
    expect((await signed(gateway.port, "new-secret")).status).toBe(202);
    expect((await signed(gateway.port, "old-secret")).status).toBe(401);
  });
});

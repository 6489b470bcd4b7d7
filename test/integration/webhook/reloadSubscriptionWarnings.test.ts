import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A subscription is judged by the running config as well as by its record: no secret of its own falls back to
 * the global secret (none: not served), a config.yaml route of the same name wins. A SIGHUP reload that
 * changes either changes what is served, and says so as a load of the subscriptions does.
 */

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const GLOBAL = "global-secret-for-reload-7d41";
const SUBSCRIPTIONS = { "webhook_subscriptions.json": JSON.stringify({ sx: { enabled: true } }) };
const unserved = (line: { msg: string; level: number }) =>
  line.level === 40 &&
  line.msg.startsWith("[webhook] dynamic subscription sx is enabled but not served (404)");

describe("SIGHUP reload and the dynamic subscriptions it changes", () => {
  it("a reload that removes the global secret names a subscription without one as not served, as the start does", async () => {
    gw = await startTestGateway({ config: webhookConfig({}, { secret: GLOBAL }), files: SUBSCRIPTIONS });
    const running = gw;
    expect(running.logs().some(unserved)).toBe(false);
    running.home.write("config.yaml", stringify(webhookConfig({})), 0o600);
    running.gateway.reload();
    const lines = running.logs();
    const warned = lines.findIndex(unserved);
    expect(warned).toBeGreaterThanOrEqual(0);
    // Before the reload's summary line, which leaves the route out of its list.
    const summary = lines.findIndex((l) => l.msg.startsWith("[webhook] Reloaded "));
    expect(warned).toBeLessThan(summary);
    expect(lines[summary]?.msg).toContain("routes: (none)");
    expect((await postJson(running.url("/webhooks/sx"), "{}", {})).status).toBe(404);
  });

  it("a reload that adds a config.yaml route of the same name names the subscription as shadowed", async () => {
    gw = await startTestGateway({ config: webhookConfig({}, { secret: GLOBAL }), files: SUBSCRIPTIONS });
    const running = gw;
    running.home.write("config.yaml", stringify(webhookConfig({ sx: {} }, { secret: GLOBAL })), 0o600);
    running.gateway.reload();
    const shadowed = running
      .logs()
      .find((l) => l.level === 40 && l.msg.startsWith("[webhook] dynamic subscription sx: not served:"));
    expect(shadowed?.msg).toContain("has a route of the same name (platforms.webhook.routes.sx), which wins");
  });
});

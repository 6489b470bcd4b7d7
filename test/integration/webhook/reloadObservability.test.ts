import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const ROUTES = { r: { secret: "INSECURE_NO_AUTH" } };

describe("SIGHUP reload and the observability settings", () => {
  it("metrics and delivery_history changes wait for a restart (named); access_log applies at once", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES) });
    const running = gw;
    running.home.write(
      "config.yaml",
      stringify(webhookConfig(ROUTES, { metrics: false, delivery_history: false, access_log: true })),
    );
    running.gateway.reload();
    const warning = running.logs().find((l) => l.level === 40 && l.msg.includes("after a restart"));
    expect(warning?.msg).toContain("platforms.webhook.metrics, platforms.webhook.delivery_history changed");
    expect((await fetch(running.url("/metrics"))).status).toBe(200);
    await postJson(running.url("/webhooks/r"), "{}", { "X-Request-ID": "after-reload" });
    expect(running.logs().some((l) => l.msg.startsWith("[access] POST r 202 after-reload"))).toBe(true);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

describe("svc webhook test on a name that is both a config.yaml route and a subscription (spec 4.3 rule 2)", () => {
  let gw: TestGateway;
  afterEach(() => gw.stop());

  it("signs with the subscription's secret, which the static route the gateway answers with refuses, and says so", {
    timeout: 60_000,
  }, async () => {
    gw = await startTestGateway({ config: webhookConfig({ dup: { secret: "static-secret" } }) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        dup: { secret: "dynamic-secret", enabled: true },
        solo: { secret: "x", enabled: true },
      }),
    );
    const port = String(gw.gateway.port);
    const res = await svc(gw.home, ["webhook", "test", "dup", "--port", port]);
    expect(res.stderr).toContain(
      'also defines a route "dup", which the gateway answers with (static routes win): the test is signed with the subscription\'s secret',
    );
    // The gateway checks the static route's secret: the subscription's signature is refused.
    expect(res).toMatchObject({ code: 1, stdout: expect.stringContaining("401 Unauthorized") });
    const alone = await svc(gw.home, ["webhook", "test", "solo", "--port", port]);
    expect(alone.stderr).not.toContain("also defines a route");
    expect(alone).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    // Enabling the shadowed subscription is done, but says the static route still answers.
    const [enabled, soloEnabled] = await Promise.all([
      svc(gw.home, ["webhook", "enable", "dup"]),
      svc(gw.home, ["webhook", "enable", "solo"]),
    ]);
    expect(enabled).toMatchObject({ code: 0, stdout: "Enabled dup\n" });
    expect(enabled.stderr).toContain(
      'config.yaml also defines a static route "dup"; the static route wins, so the gateway answers with it, not with this subscription',
    );
    expect(soloEnabled).toMatchObject({ code: 0, stderr: "" });
  });
});

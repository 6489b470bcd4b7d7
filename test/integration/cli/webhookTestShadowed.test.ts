import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

describe("svc webhook test on a name that is both a config.yaml route and a subscription (spec 4.3 rule 2)", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("signs with the subscription's secret, which the static route the gateway answers with refuses, and says so", {
    timeout: 60_000,
  }, async () => {
    const started = await startTestGateway({ config: webhookConfig({ dup: { secret: "static-secret" } }) });
    gw = started;
    started.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        dup: { secret: "dynamic-secret", enabled: true },
        solo: { secret: "x", enabled: true },
      }),
    );
    const port = String(started.gateway.port);
    const res = await svc(started.home, ["webhook", "test", "dup", "--port", port]);
    expect(res.stderr).toContain(
      'also defines a route "dup", which the gateway answers with (static routes win): the test is signed with the subscription\'s secret',
    );
    // The gateway checks the static route's secret: the subscription's signature is refused.
    expect(res).toMatchObject({ code: 1, stdout: expect.stringContaining("401 Unauthorized") });
    const alone = await svc(started.home, ["webhook", "test", "solo", "--port", port]);
    expect(alone.stderr).not.toContain("also defines a route");
    expect(alone).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    // Enabling the shadowed subscription is done, but says the static route still answers.
    const [enabled, soloEnabled] = await svcEach(started.home, [
      ["webhook", "enable", "dup"],
      ["webhook", "enable", "solo"],
    ]);
    expect(enabled).toMatchObject({ code: 0, stdout: "Enabled dup\n" });
    expect(enabled.stderr).toContain(
      'config.yaml also defines a static route "dup"; the static route wins, so the gateway answers with it, not with this subscription',
    );
    expect(soloEnabled).toMatchObject({ code: 0, stderr: "" });
  });

  it("with multiplexing on and the route bound to another profile, the note says the test's URL gets 404", {
    timeout: 60_000,
  }, async () => {
    const started = await startTestGateway({
      config: webhookConfig(
        { "mx-shadow": { secret: "mx-static-secret-5521", profile: "work" } },
        {},
        { gateway: { multiplex_profiles: true } },
      ),
    });
    gw = started;
    started.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ "mx-shadow": { secret: "mx-dynamic-secret-5522", enabled: true } }),
      0o600,
    );
    const res = await svc(started.home, [
      "webhook",
      "test",
      "mx-shadow",
      "--port",
      String(started.gateway.port),
    ]);
    expect(res.stderr).toContain(
      `Note: ${started.home.dir}/config.yaml also defines a route "mx-shadow", which the gateway answers with (static routes win): bound to profile work, it answers at /p/work/webhooks/mx-shadow (gateway.multiplex_profiles is on), so the test's /webhooks/mx-shadow gets 404 Unknown route`,
    );
    expect(res.stderr).not.toContain("401");
    expect(res).toMatchObject({ code: 1, stdout: expect.stringContaining("404 Not Found") });
  });

  it("disabling or removing a shadowed subscription says the static route still answers, a lone one says nothing", {
    timeout: 60_000,
  }, async () => {
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        stringify(webhookConfig({ "ops-shadow-dup": { secret: "ops-static-secret-4417" } })),
      );
      home.write(
        "webhook_subscriptions.json",
        JSON.stringify({
          "ops-shadow-dup": { secret: "ops-dynamic-secret-4418", enabled: true },
          "ops-shadow-solo": { secret: "ops-dynamic-secret-4419", enabled: true },
        }),
        0o600,
      );
      const note = `Note: ${home.dir}/config.yaml defines a static route "ops-shadow-dup", which the gateway still answers with (static routes win): requests to ops-shadow-dup are not refused; remove the route there to stop them`;
      const disabled = await svc(home, ["webhook", "disable", "ops-shadow-dup"]);
      expect(disabled).toMatchObject({ code: 0, stdout: "Disabled ops-shadow-dup\n" });
      expect(disabled.stderr).toContain(note);
      const removed = await svc(home, ["webhook", "remove", "ops-shadow-dup"]);
      expect(removed).toMatchObject({ code: 0, stdout: "Removed ops-shadow-dup\n" });
      expect(removed.stderr).toContain(note);
      const [soloDisabled, soloRemoved] = [
        await svc(home, ["webhook", "disable", "ops-shadow-solo"]),
        await svc(home, ["webhook", "remove", "ops-shadow-solo"]),
      ];
      expect(soloDisabled).toMatchObject({ code: 0, stderr: "" });
      expect(soloRemoved).toMatchObject({ code: 0, stderr: "" });
    } finally {
      home.cleanup();
    }
  });
});

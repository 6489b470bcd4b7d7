import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc, svcEach } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook test reads dynamic subscriptions only, never the routes of config.yaml", {
  timeout: 90_000,
}, () => {
  it("a subscription is signed with its own secret (a whsec_ key as Standard Webhooks), or the global one, and accepted", async () => {
    gw = await startTestGateway({ config: webhookConfig({}, { secret: "global-secret" }) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        own: { secret: "sub-secret", events: ["push"], enabled: true },
        global: { enabled: true },
        std: { secret: `whsec_${Buffer.from("standard-key-bytes").toString("base64")}`, enabled: true },
      }),
    );
    const port = String(gw.gateway.port);
    const [own, global, std] = await svcEach(gw.home, [
      ["webhook", "test", "own", "--port", port],
      ["webhook", "test", "global", "--port", port],
      ["webhook", "test", "std", "--port", port],
    ]);
    expect(own).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    // The subscription's first event is the default event type.
    expect(own.stdout).toContain('"event":"push"');
    expect(global).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    expect(std).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const auth = gw.logs().filter((l) => typeof l.msg === "string" && l.msg.includes("std"));
    expect(JSON.stringify(auth)).not.toContain("whsec_");
  });

  it("a config.yaml route with no subscription of its name is refused, saying test sends to subscriptions only", async () => {
    gw = await startTestGateway({ config: webhookConfig({ own: { secret: "s" } }) });
    const port = String(gw.gateway.port);
    const [route, nope] = await svcEach(gw.home, [
      ["webhook", "test", "own", "--port", port],
      ["webhook", "test", "nope", "--port", port],
    ]);
    expect(route.code).toBe(2);
    // Nothing was sent (the URL and the answer are printed after sending).
    expect(route.stdout).toBe("");
    expect(route.stderr).toContain('no dynamic subscription named "own"');
    expect(route.stderr).toContain("svc webhook test sends only to dynamic subscriptions");
    expect(nope.code).toBe(2);
    expect(nope.stderr).toContain('no dynamic subscription named "nope"');
  });
});

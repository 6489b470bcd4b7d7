import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook test <route> for config.yaml routes", { timeout: 90_000 }, () => {
  it("signs with the route's own secret (and the global one) and the gateway accepts it", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          own: { secret: "route-secret", events: ["push"] },
          global: {},
          // A Standard Webhooks signing key: signed with the decoded key, as Svix-style senders do.
          std: { secret: `whsec_${Buffer.from("standard-key-bytes").toString("base64")}` },
        },
        { secret: "global-secret" },
      ),
    });
    const port = String(gw.gateway.port);
    const [own, global, std] = await Promise.all([
      svc(gw.home, ["webhook", "test", "own", "--port", port]),
      svc(gw.home, ["webhook", "test", "global", "--port", port]),
      svc(gw.home, ["webhook", "test", "std", "--port", port]),
    ]);
    expect(own).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    // The route's first event is the default event type.
    expect(own.stdout).toContain('"event":"push"');
    expect(global).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    expect(std).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const auth = gw.logs().filter((l) => typeof l.msg === "string" && l.msg.includes("std"));
    expect(JSON.stringify(auth)).not.toContain("whsec_");
  });

  it("a name that is neither a route nor a subscription is refused naming both places", async () => {
    gw = await startTestGateway({ config: webhookConfig({ own: { secret: "s" } }) });
    const res = await svc(gw.home, ["webhook", "test", "nope", "--port", String(gw.gateway.port)]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('no route named "nope" in');
    expect(res.stderr).toContain("no dynamic subscription of that name");
  });
});

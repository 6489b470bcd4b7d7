import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/**
 * An INSECURE_NO_AUTH subscription on a gateway that binds every interface is not served (spec 2.2 rule 5,
 * 5 rule 4): the gateway answers 404. `svc webhook list` says why; so must `test` and `redeliver`, which
 * otherwise print a bare `404 Unknown route` for a subscription the list shows as enabled.
 */
describe("svc webhook test / redeliver to an INSECURE_NO_AUTH subscription off loopback", {
  timeout: 90_000,
}, () => {
  it("notes why the gateway answers 404, as svc webhook list does", async () => {
    gw = await startTestGateway({ config: webhookConfig({}, { host: "0.0.0.0" }) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ "open-dev": { secret: "INSECURE_NO_AUTH", enabled: true } }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const why =
      "Note: open-dev is enabled but not served (404): its secret is INSECURE_NO_AUTH, which is served only on a loopback bind, but platforms.webhook.host is 0.0.0.0";
    const test = await svc(gw.home, ["webhook", "test", "open-dev", "--port", port]);
    expect(test).toMatchObject({ code: 1, stdout: expect.stringContaining("404 Not Found") });
    expect(test.stderr).toContain(why);
    expect(test.stderr).toContain("svc webhook subscribe open-dev --secret <secret>");

    gw.home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: "open-dev-1", at: new Date().toISOString(), route: "open-dev", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`,
      0o600,
    );
    const redeliver = await svc(gw.home, ["webhook", "redeliver", "open-dev-1", "--port", port]);
    expect(redeliver).toMatchObject({ code: 1, stdout: expect.stringContaining("404 Not Found") });
    expect(redeliver.stderr).toContain(why);
  });

  it("a subscription with no secret at all (and no global one) is refused before anything is sent (exit 2)", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    gw.home.write("webhook_subscriptions.json", JSON.stringify({ bare: { enabled: true } }), 0o600);
    const test = await svc(gw.home, ["webhook", "test", "bare", "--port", String(gw.gateway.port)]);
    expect(test).toMatchObject({ code: 2, stdout: "" });
    expect(test.stderr).toContain(
      "bare has no secret of its own and there is no global secret (platforms.webhook.secret in",
    );
    expect(test.stderr).toContain(
      "the gateway does not serve it; set one with svc webhook subscribe bare --secret <secret>",
    );
  });

  it("says nothing of the kind for the same subscription on a loopback bind, which serves it", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ "open-dev": { secret: "INSECURE_NO_AUTH", enabled: true } }),
      0o600,
    );
    const test = await svc(gw.home, ["webhook", "test", "open-dev", "--port", String(gw.gateway.port)]);
    expect(test).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    expect(test.stderr).not.toContain("not served");
  });
});

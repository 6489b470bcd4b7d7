import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

// Spec 2.2 lists the five conditions that refuse startup; a target whose platform is not enabled is not
// one of them. Spec 4.4: such a target cannot deliver, and spec 7: a direct delivery whose target
// adapter rejected or raised is 502 "Delivery failed".
describe("a route whose delivery platform is not enabled (spec 2.2, 4.4, 7)", () => {
  it("the gateway starts and warns, naming the route and the fix", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        alerts: { secret: OPEN, deliver: "telegram", deliver_only: true, prompt: "alert {id}" },
      }),
    });
    const warning = gw.logs().find((l) => l.msg.includes("routes.alerts.deliver"));
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toMatch(
      /telegram needs platforms\.telegram enabled — set platforms\.telegram\.enabled: true/,
    );
  });

  it("a direct delivery to it answers 502 Delivery failed, details only in the log", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        alerts: { secret: OPEN, deliver: "chat_2", deliver_only: true, prompt: "alert {id}" },
      }),
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 7 }, { "X-Request-ID": "ne-1" });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: "Delivery failed" });
    expect(gw.logs().map((l) => l.msg)).toContainEqual(expect.stringMatching(/discord.*not enabled/));
  });

  it("an agent-mode route to it accepts the event (202) and logs the failed delivery", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { alerts: { secret: OPEN, deliver: "slack", prompt: "alert {id}" } },
        {},
        { agent: { provider: "echo" } },
      ),
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 7 }, { "X-Request-ID": "ne-2" });
    expect(res).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "ne-2" } });
    const running = gw;
    await vi.waitFor(() =>
      expect(
        running.logs().some((l) => l.delivery_id === "ne-2" && l.level === 50 && /slack/.test(l.msg)),
      ).toBe(true),
    );
  });
});

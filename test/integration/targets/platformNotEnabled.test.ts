import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** Dynamic subscriptions (spec 2.6) to a platform that is not enabled: `subscribe` only warns, so they exist. */
function subscriptions(records: Record<string, Record<string, unknown>>): string {
  const file: Record<string, unknown> = {};
  for (const [name, record] of Object.entries(records))
    file[name] = { secret: OPEN, enabled: true, ...record };
  return JSON.stringify(file);
}

// A static route to such a platform refuses startup (test/integration/webhook/platformWiring.test.ts);
// a subscription made while the platform is off is served, and its deliveries fail as spec 4.4/7 say.
describe("a subscription whose delivery platform is not enabled (spec 4.4, 7)", () => {
  it("a direct delivery to it answers 502 Delivery failed, the log names the platform and the fix", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: {
        "webhook_subscriptions.json": subscriptions({
          alerts: { deliver: "chat_2", deliver_only: true, prompt: "alert {id}" },
        }),
      },
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 7 }, { "X-Request-ID": "ne-1" });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: "Delivery failed" });
    expect(gw.logs().map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/"chat_2" \(discord\) is not enabled — set platforms\.discord\.enabled: true/),
    );
  });

  it("an agent-mode subscription to it accepts the event (202) and logs the failed delivery", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}, {}, { agent: { provider: "echo" } }),
      files: {
        "webhook_subscriptions.json": subscriptions({ alerts: { deliver: "slack", prompt: "alert {id}" } }),
      },
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

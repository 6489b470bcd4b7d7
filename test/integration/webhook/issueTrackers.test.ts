import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Linear (an issue tracker, spec 1's "issue trackers") as it sends: `Linear-Signature` = hex HMAC-SHA256
 * of the raw body, `Linear-Event` = the entity type, `Linear-Delivery` = the delivery UUID, and its send
 * time as `webhookTimestamp` (Unix ms) inside the signed body, which Linear's own verifier
 * (`@linear/sdk/webhooks` LinearWebhookClient.verify) requires to be recent.
 */

const SECRET = "lin_wh_5c3b8b7e0f3a4b6c9d2e1f0a";

describe.each(["uws", "node"] as const)("a Linear webhook on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        { linear: { secret: SECRET }, issues: { secret: SECRET, events: ["Issue"] } },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const issueEvent = (webhookTimestamp: number, type = "Issue") =>
    JSON.stringify({
      action: "create",
      type,
      data: { id: "9cfb482a-81e3-4154-b5b9-2c805e70a02d", identifier: "ENG-42", title: "Crash on save" },
      url: "https://linear.app/acme/issue/ENG-42/crash-on-save",
      createdAt: new Date(webhookTimestamp).toISOString(),
      organizationId: "1d9e5b0a-6d4c-4b8e-9a1f-7c2e3d4f5a6b",
      webhookTimestamp,
      webhookId: "00000000-0000-4000-8000-000000000001",
    });
  const linearHeaders = (body: string, delivery: string, event = "Issue", secret = SECRET) => ({
    "Linear-Signature": createHmac("sha256", secret).update(body).digest("hex"),
    "Linear-Event": event,
    "Linear-Delivery": delivery,
    "User-Agent": "Linear-Webhook",
  });
  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);

  it("is accepted: the event is Linear-Event, the delivery id Linear-Delivery, and a retry is a duplicate", async () => {
    const body = issueEvent(gw.clock.now());
    const delivery = randomUUID();
    expect(await post("linear", body, linearHeaders(body, delivery))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "linear", event: "Issue", delivery_id: delivery },
    });
    expect(await post("linear", body, linearHeaders(body, delivery))).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
  });

  it("the events list selects on the Linear entity type", async () => {
    const body = issueEvent(gw.clock.now(), "Comment");
    expect(await post("issues", body, linearHeaders(body, randomUUID(), "Comment"))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "Comment" },
    });
  });

  it("a wrong secret, a changed body or a webhookTimestamp more than 300 s away is 401", async () => {
    const now = gw.clock.now();
    const body = issueEvent(now);
    const tampered = body.replace("Crash on save", "Crash on load");
    const old = issueEvent(now - 301_000);
    for (const [sent, headers] of [
      [body, linearHeaders(body, randomUUID(), "Issue", "lin_wh_other")],
      [tampered, linearHeaders(body, randomUUID())],
      [old, linearHeaders(old, randomUUID())],
    ] as const) {
      expect(await post("linear", sent, headers)).toMatchObject({
        status: 401,
        body: { error: "Invalid signature" },
      });
    }
    const edge = issueEvent(now - 300_000);
    expect((await post("linear", edge, linearHeaders(edge, randomUUID()))).status).toBe(202);
  });
});

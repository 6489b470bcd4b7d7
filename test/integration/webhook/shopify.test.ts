import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Shopify as it sends: `X-Shopify-Hmac-Sha256` = base64 HMAC-SHA256 of the raw body keyed with the app's
 * client secret, `X-Shopify-Topic` = the event (`orders/create`), `X-Shopify-Webhook-Id` = the delivery,
 * unchanged across Shopify's retries (8 over 4 hours when it gets no 2xx within 5 s).
 */

const SECRET = "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";

describe.each(["uws", "node"] as const)("a Shopify webhook on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ shop: { secret: SECRET, events: ["orders/create"] } }, { rate_limit: 1000 }),
    });
  });
  afterAll(() => gw.stop());

  const order = JSON.stringify({
    id: 820982911946154500,
    email: "jon@example.com",
    total_price: "403.00",
    currency: "USD",
    line_items: [{ id: 866550311766439000, title: "IPod Nano - 8GB", quantity: 1, price: "199.00" }],
  });
  const headers = (topic: string, webhookId: string, secret = SECRET) => ({
    "X-Shopify-Topic": topic,
    "X-Shopify-Hmac-Sha256": createHmac("sha256", secret).update(order).digest("base64"),
    "X-Shopify-Shop-Domain": "example.myshopify.com",
    "X-Shopify-API-Version": "2026-10",
    "X-Shopify-Webhook-Id": webhookId,
    "X-Shopify-Event-Id": randomUUID(),
    "X-Shopify-Triggered-At": new Date(gw.clock.now()).toISOString(),
  });
  const post = (h: Record<string, string>) => postJson(gw.url("/webhooks/shop"), order, h);

  it("is accepted: the event is X-Shopify-Topic, the delivery id X-Shopify-Webhook-Id; a retry is a duplicate", async () => {
    const webhookId = randomUUID();
    expect(await post(headers("orders/create", webhookId))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "shop", event: "orders/create", delivery_id: webhookId },
    });
    expect(await post(headers("orders/create", webhookId))).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect(await post(headers("orders/paid", randomUUID()))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "orders/paid" },
    });
  });

  it("an HMAC made with another secret is 401", async () => {
    expect(await post(headers("orders/create", randomUUID(), "shpss_other"))).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
  });
});

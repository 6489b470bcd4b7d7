import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Payment systems (spec 1) besides Stripe, as they send. Paddle Billing: `Paddle-Signature:
 * ts=<unix>;h1=<hex>`, the HMAC-SHA256 of `<ts>:<raw body>`, the event in the body's `event_type`.
 * Lemon Squeezy: `X-Signature` = hex HMAC-SHA256 of the raw body, the event in `X-Event-Name`.
 */

const PADDLE = "pdl_ntfset_01gkpjp8bkh3ph6m2mm4n3b1jk_6oB9T6hN0pp3rT0sPP2ZpNl2kR3wq";
const LEMON = "lemon-signing-secret-4Hq8";
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

describe.each(["uws", "node"] as const)("payment senders on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          paddle: { secret: PADDLE, events: ["transaction.completed"] },
          lemon: { secret: LEMON, events: ["order_created"] },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const nowSeconds = () => Math.floor(gw.clock.now() / 1000);

  it("Paddle: ts;h1 over '<ts>:<body>' is accepted, any h1 during rotation; a stale ts or wrong key is 401", async () => {
    const body = JSON.stringify({
      event_id: "evt_01h8bx8nxwq6y0x0x0x0x0x0x0",
      event_type: "transaction.completed",
      occurred_at: new Date(gw.clock.now()).toISOString(),
      notification_id: "ntf_01h8bx8n0x0x0x0x0x0x0x0x0x",
      data: { id: "txn_01h8bx8n", status: "completed", currency_code: "USD" },
    });
    const signed = (ts: number, ...keys: string[]) =>
      [`ts=${ts}`, ...keys.map((key) => `h1=${hex(key, `${ts}:${body}`)}`)].join(";");
    const post = (signature: string) =>
      postJson(gw.url("/webhooks/paddle"), body, { "Paddle-Signature": signature });
    expect(await post(signed(nowSeconds(), PADDLE))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "paddle", event: "transaction.completed" },
    });
    expect((await post(signed(nowSeconds(), "pdl_ntfset_previous", PADDLE))).status).toBe(202);
    expect(await post(signed(nowSeconds() - 301, PADDLE))).toMatchObject({ status: 401 });
    expect(await post(signed(nowSeconds(), "pdl_ntfset_other"))).toMatchObject({ status: 401 });
  });

  it("Paddle: a ts exactly 300 s either side of the gateway's clock passes, 301 s either side is 401", async () => {
    const body = JSON.stringify({ event_type: "transaction.completed", notification_id: "ntf_edge" });
    const post = (ts: number) =>
      postJson(gw.url("/webhooks/paddle"), body, {
        "Paddle-Signature": `ts=${ts};h1=${hex(PADDLE, `${ts}:${body}`)}`,
      });
    const now = nowSeconds();
    for (const offset of [-300, 300]) expect((await post(now + offset)).status, `${offset}`).toBe(202);
    for (const offset of [-301, 301]) expect((await post(now + offset)).status, `${offset}`).toBe(401);
  });

  it("Lemon Squeezy: X-Signature over the body is accepted and X-Event-Name is the event; a wrong key is 401", async () => {
    const body = JSON.stringify({
      meta: { event_name: "order_created", custom_data: null },
      data: { type: "orders", id: "1", attributes: { status: "paid", total: 999 } },
    });
    const post = (key: string, event: string) =>
      postJson(gw.url("/webhooks/lemon"), body, { "X-Signature": hex(key, body), "X-Event-Name": event });
    expect(await post(LEMON, "order_created")).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "lemon", event: "order_created" },
    });
    expect(await post(LEMON, "order_refunded")).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "order_refunded" },
    });
    expect(await post("wrong", "order_created")).toMatchObject({ status: 401 });
  });
});

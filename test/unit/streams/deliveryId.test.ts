import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  bodyDeliveryId,
  DELIVERY_ID_HEADERS,
  MAX_DELIVERY_ID_LENGTH,
  resolveDeliveryId,
} from "../../../src/streams/deliveryId.js";

describe("resolveDeliveryId (spec 6)", () => {
  it("takes the first present header in the documented order", () => {
    const headers = Object.fromEntries(DELIVERY_ID_HEADERS.map((name) => [name, `id-from-${name}`]));
    for (const name of DELIVERY_ID_HEADERS) {
      expect(resolveDeliveryId(headers)).toBe(`id-from-${name}`);
      delete headers[name];
    }
    expect(resolveDeliveryId(headers)).toBeUndefined();
  });

  it("keeps the spec's four in spec order, each followed by its real alias (Bitbucket Cloud's X-Request-UUID last)", () => {
    expect(DELIVERY_ID_HEADERS).toEqual([
      "x-forge-delivery",
      "x-github-delivery",
      "x-gitea-delivery",
      "x-forgejo-delivery",
      "x-gogs-delivery",
      "vendor-id",
      "svix-id",
      "webhook-id",
      "idempotency-key",
      "linear-delivery",
      "x-atlassian-webhook-identifier",
      "x-shopify-webhook-id",
      "x-request-id",
      "x-request-uuid",
      "request-id",
    ]);
  });

  it("skips blank values and trims surrounding whitespace", () => {
    expect(resolveDeliveryId({ "x-github-delivery": "  ", "webhook-id": " msg_1 " })).toBe("msg_1");
    expect(resolveDeliveryId({ "x-forge-delivery": "" })).toBeUndefined();
  });

  it("replaces an over-long ID by a fixed-size digest, still stable across retries", () => {
    const long = "x".repeat(MAX_DELIVERY_ID_LENGTH + 1);
    const id = resolveDeliveryId({ "x-request-id": long });
    expect(id).toBe(`sha256:${createHash("sha256").update(long).digest("hex")}`);
    expect(id?.length).toBeLessThanOrEqual(MAX_DELIVERY_ID_LENGTH);
    const exact = "y".repeat(MAX_DELIVERY_ID_LENGTH);
    expect(resolveDeliveryId({ "x-request-id": exact })).toBe(exact);
  });
});

describe("bodyDeliveryId: Stripe's event id, the delivery id its retries keep", () => {
  const stripe = { "stripe-signature": "t=1,v1=00" };
  it("is the body's evt_ id on a request signed by Stripe, and only then", () => {
    expect(bodyDeliveryId(stripe, { id: "evt_1NG8Du2eZvKYlo2CUI79vXWy", type: "invoice.paid" })).toBe(
      "evt_1NG8Du2eZvKYlo2CUI79vXWy",
    );
    expect(bodyDeliveryId(stripe, { id: "evt_test_65R9Ijk8bMJqDbiIXqpuC2" })).toBe(
      "evt_test_65R9Ijk8bMJqDbiIXqpuC2",
    );
    expect(bodyDeliveryId({}, { id: "evt_1NG8Du2eZvKYlo2CUI79vXWy" })).toBeUndefined();
    for (const id of ["in_1", "evt_", "evt_a b", 42, `evt_${"x".repeat(197)}`]) {
      expect(bodyDeliveryId(stripe, { id }), String(id)).toBeUndefined();
    }
    expect(bodyDeliveryId(stripe, Object.create({ id: "evt_1" }) as Record<string, unknown>)).toBeUndefined();
  });

  it("comes after every delivery-ID header", () => {
    expect(resolveDeliveryId({ "x-request-id": "req-1" }, "evt_1")).toBe("req-1");
    expect(resolveDeliveryId({}, "evt_1")).toBe("evt_1");
    expect(resolveDeliveryId({})).toBeUndefined();
  });
});

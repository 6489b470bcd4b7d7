import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  DELIVERY_ID_HEADERS,
  MAX_DELIVERY_ID_LENGTH,
  resolveDeliveryId,
} from "../../../src/streams/deliveryId.js";

describe("resolveDeliveryId (spec 6)", () => {
  it("takes the first present header in the documented order", () => {
    const headers: Record<string, string> = Object.fromEntries(
      DELIVERY_ID_HEADERS.map((name) => [name, `id-from-${name}`]),
    );
    headers["x-pagerduty-signature"] = "v1=ab";
    for (const name of DELIVERY_ID_HEADERS) {
      expect(resolveDeliveryId(headers)).toBe(`id-from-${name}`);
      delete headers[name];
    }
    expect(resolveDeliveryId(headers)).toBeUndefined();
  });

  it("keeps the spec's four in spec order, each followed by its real alias (Sentry's Request-ID last)", () => {
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
      "x-webhook-id",
      "x-request-uuid",
      "x-request-id",
      "request-id",
    ]);
  });

  it("takes PagerDuty's X-Webhook-Id, repeated on each of its retries, before a proxy's X-Request-ID", () => {
    const pagerDuty = {
      "x-pagerduty-signature": "v1=0a1b",
      "x-webhook-id": "0f5cb2a6-pd",
      "x-webhook-subscription": "PSUB1",
      "x-request-id": "proxy-1",
    };
    expect(resolveDeliveryId(pagerDuty)).toBe("0f5cb2a6-pd");
  });

  it("takes Bitbucket Cloud's X-Request-UUID, kept across its retries, before the X-Request-ID a proxy sets per request", () => {
    // ingress-nginx and Heroku's router add a fresh X-Request-ID to a request that has none: Bitbucket's
    // retry (X-Attempt-Number: 2) must still be the same delivery.
    const first = {
      "x-event-key": "pullrequest:created",
      "x-request-uuid": "bb-7",
      "x-request-id": "proxy-1",
    };
    const retry = { ...first, "x-attempt-number": "2", "x-request-id": "proxy-2" };
    expect(resolveDeliveryId(first)).toBe("bb-7");
    expect(resolveDeliveryId(retry)).toBe("bb-7");
  });

  it("reads X-Webhook-Id only on PagerDuty's requests: other senders put their subscription's id there", () => {
    const generic = { "x-webhook-signature": "ab12", "x-webhook-id": "sub_1", "x-request-id": "req-7" };
    expect(resolveDeliveryId(generic)).toBe("req-7");
    expect(resolveDeliveryId({ "x-webhook-id": "sub_1" })).toBeUndefined();
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

import { describe, expect, it } from "vitest";
import type { Filter } from "../../../src/config/sections/filters.js";
import { historyHeaderNames, historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import {
  HISTORY_HEADER_VALUE_CHARS,
  HISTORY_HEADERS_MAX,
  type HistoryRecord,
} from "../../../src/io/stores/deliveryHistory.js";
import { headersReadBy } from "../../../src/streams/filters.js";
import { NOT_AMONG_EVENTS } from "../../../src/streams/stages/events.js";

function recorded() {
  const records: HistoryRecord[] = [];
  const hooks = historyHooks({ record: (r) => records.push(r), flush: () => {}, close: () => {} }, () => 0);
  return { hooks, records };
}

describe("delivery history: what a request's record names", () => {
  it("a coalesced 202 is recorded under the event's own delivery ID and event type, which its body does not carry", () => {
    const { hooks, records } = recorded();
    const head = { method: "POST", path: "/webhooks/pr", headers: { "content-type": "application/json" } };
    const body = Buffer.from('{"event_type":"pr_update","pr":{"number":1}}');
    hooks.request("pr", head, body, {
      status: 202,
      body: { status: "coalesced" },
      deliveryId: "6f1c-generated",
      event: "pr_update",
    });
    expect(records[0]).toMatchObject({
      kind: "request",
      id: "6f1c-generated",
      outcome: "coalesced",
      event: "pr_update",
      // From the body: a redelivery sends the body again and names it in no header.
      event_header: "body",
    });
  });

  it("a direct delivery, a duplicate and a script's ignore name the event the body named, kept aside by their answers", () => {
    const { hooks, records } = recorded();
    const head = { method: "POST", path: "/webhooks/stripe", headers: { "stripe-signature": "t=1,v1=ab" } };
    const body = Buffer.from('{"id":"evt_1","type":"invoice.paid"}');
    const delivered = { status: "delivered", route: "stripe", target: "telegram", delivery_id: "d-1" };
    hooks.request("stripe", head, body, { status: 200, body: delivered, event: "invoice.paid" });
    hooks.request("stripe", head, body, {
      status: 200,
      body: { status: "duplicate" },
      event: "invoice.paid",
    });
    hooks.request("stripe", head, body, {
      status: 200,
      body: { status: "ignored", reason: "script" },
      event: "invoice.paid",
    });
    expect(records.map((r) => r.kind === "request" && [r.outcome, r.event, r.event_header])).toEqual([
      ["delivered", "invoice.paid", "body"],
      ["duplicate", "invoice.paid", "body"],
      ["ignored", "invoice.paid", "body"],
    ]);
  });

  it("a refused request's record keeps why it was refused, as the auth stage said it; an answer without one keeps none", () => {
    const { hooks, records } = recorded();
    const head = {
      method: "POST",
      path: "/webhooks/gh",
      headers: { "x-github-delivery": "d-1", "x-hub-signature-256": "sha256=00" },
    };
    const refused = { status: 401, body: { error: "Invalid signature" } };
    hooks.request("gh", head, Buffer.from("{}"), refused, "x-hub-signature-256 does not match");
    hooks.request("gh", head, Buffer.from("{}"), refused);
    expect(records.map((r) => r.kind === "request" && [r.status, r.outcome, r.reason])).toEqual([
      [401, "Invalid signature", "x-hub-signature-256 does not match"],
      [401, "Invalid signature", undefined],
    ]);
  });

  it("an ignored request's record keeps what ignored it, as the stage said it: the events stage's fixed text, with the event type in its own field", () => {
    const { hooks, records } = recorded();
    const head = {
      method: "POST",
      path: "/webhooks/gh",
      headers: { "x-github-delivery": "d-1", "x-github-event": "issues" },
    };
    const byEvents = { status: 200, body: { status: "ignored", event: "issues" } };
    const byFilter = { status: 200, body: { status: "ignored", reason: "filter" } };
    hooks.request("gh", head, Buffer.from("{}"), byEvents, NOT_AMONG_EVENTS);
    hooks.request("gh", head, Buffer.from("{}"), byFilter, "filter action did not match");
    expect(records.map((r) => r.kind === "request" && [r.status, r.outcome, r.event, r.reason])).toEqual([
      [200, "ignored", "issues", "event not among the route's events"],
      [200, "ignored", "issues", "filter action did not match"],
    ]);
  });
});

describe("delivery history: the request headers a record keeps for a redelivery", () => {
  const filters: Filter[] = [
    { field: "headers.X-Tenant-Name", equals: "acme-north-7" },
    {
      any: [
        { field: "headers.X-Stage", in: ["production"] },
        { field: "order", equals: 0 },
      ],
    },
    {
      not: {
        all: [
          { field: "headers.x-region", missing: true },
          { field: "headers.X-Tenant-Name", exists: true },
        ],
      },
    },
    // Never kept: secrets, signatures and their timestamps, delivery IDs, what a redelivery sets itself.
    { field: "headers.X-Hub-Signature-256", exists: true },
    { field: "headers.Authorization", exists: true },
    { field: "headers.X-Api-Key", exists: true },
    { field: "headers.X-Gitlab-Token", exists: true },
    { field: "headers.X-Webhook-Timestamp", exists: true },
    { field: "headers.X-Shopify-Hmac-Sha256", exists: true },
    { field: "headers.X-GitHub-Delivery", exists: true },
    { field: "headers.Content-Type", exists: true },
  ];

  it("names the headers the filters read, in nested all/any/not groups too, lower-cased and once each", () => {
    expect(headersReadBy(filters).slice(0, 3)).toEqual(["x-tenant-name", "x-stage", "x-region"]);
    expect(headersReadBy([{ field: "pull_request.user", exists: true }])).toEqual([]);
  });

  it("keeps none of the secret, signature, delivery-ID or framing headers; a route without header filters keeps none", () => {
    expect(historyHeaderNames(filters)).toEqual(["x-tenant-name", "x-stage", "x-region"]);
    expect(historyHeaderNames(undefined)).toHaveLength(0);
    expect(historyHeaderNames([{ field: "action", equals: "opened" }])).toHaveLength(0);
    // Computed once per filter list.
    expect(historyHeaderNames(filters)).toBe(historyHeaderNames(filters));
  });

  it("keeps no header whose name has `sig` as a word part (PayPal's transmission signature, x-sig), but keeps one that merely contains the letters", () => {
    const sigFilters: Filter[] = [
      { field: "headers.PAYPAL-TRANSMISSION-SIG", exists: true },
      { field: "headers.X-Sig", exists: true },
      { field: "headers.X-Sig256", exists: true },
      { field: "headers.Sig_Value", exists: true },
      { field: "headers.X-Signature-Ed25519", exists: true },
      { field: "headers.X-Design-Id", exists: true },
      { field: "headers.X-Consignment", exists: true },
    ];
    expect(historyHeaderNames(sigFilters)).toEqual(["x-design-id", "x-consignment"]);
  });

  it("keeps their values on an accepted request only, bounded in number and length", () => {
    const records: HistoryRecord[] = [];
    const many = Array.from({ length: HISTORY_HEADERS_MAX + 4 }, (_, i) => `x-label-${i}`);
    const hooks = historyHooks(
      { record: (r) => records.push(r), flush: () => {}, close: () => {} },
      () => 0,
      (route) => (route === "tenants" ? ["x-tenant-name", "x-long-value", ...many] : []),
    );
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-tenant-name": "acme-north-7",
      "x-long-value": "v".repeat(HISTORY_HEADER_VALUE_CHARS + 1),
      ...Object.fromEntries(many.map((name) => [name, `value-of-${name}`])),
    };
    const head = { method: "POST", path: "/webhooks/tenants", headers };
    const body = Buffer.from('{"order":41}');
    hooks.request("tenants", head, body, { status: 202, body: { status: "accepted" }, deliveryId: "k-1" });
    hooks.request("tenants", head, body, { status: 401, body: { error: "Invalid signature" } });
    hooks.request("others", head, body, { status: 202, body: { status: "accepted" }, deliveryId: "k-2" });
    const kept = records.map((r) => (r.kind === "request" ? r.headers : undefined));
    expect(kept[0]).toHaveLength(HISTORY_HEADERS_MAX);
    expect(kept[0]?.[0]).toEqual(["x-tenant-name", "acme-north-7"]);
    // A value too long is left out, not cut (a cut value would be filtered otherwise).
    expect(kept[0]?.some(([name]) => name === "x-long-value")).toBe(false);
    expect(kept.slice(1)).toEqual([undefined, undefined]);
  });
});

import { describe, expect, it } from "vitest";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import type { HistoryRecord } from "../../../src/io/stores/deliveryHistory.js";

function recorded() {
  const records: HistoryRecord[] = [];
  const hooks = historyHooks({ record: (r) => records.push(r), close: () => {} }, () => 0);
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
});

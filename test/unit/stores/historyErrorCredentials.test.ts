import { describe, expect, it } from "vitest";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import type { HistoryRecord } from "../../../src/io/stores/deliveryHistory.js";

/**
 * A failed run's or delivery's error is kept "as the gateway's log lines give it" (docs/operations.md).
 * The log hides a credential an error quotes after `Bearer` or `Basic` (a model server answering
 * "invalid token Bearer sk-..."); the history kept it in clear, and `svc webhook deliveries` showed it.
 */
describe("delivery history: a failed run's or delivery's error", () => {
  it("hides a quoted Bearer or Basic credential as the log does", () => {
    const records: HistoryRecord[] = [];
    const hooks = historyHooks({ record: (r) => records.push(r), flush: () => {}, close: () => {} }, () => 0);
    hooks.run(
      { deliveryId: "d-1", routeName: "pr", event: "push", receivedAt: 0 },
      new Error("model endpoint answered HTTP 401: invalid token Bearer sk-live-0123456789abcdef"),
    );
    hooks.delivery(
      { deliveryId: "d-1", route: "pr" },
      "forge_comment",
      false,
      "forge_comment: HTTP 401 — bad credentials Basic dXNlcjpwYXNzd29yZDEyMw==",
    );
    expect(records).toMatchObject([
      { kind: "run", error: "model endpoint answered HTTP 401: invalid token Bearer [redacted]" },
      { kind: "delivery", error: "forge_comment: HTTP 401 — bad credentials Basic [redacted]" },
    ]);
  });
});

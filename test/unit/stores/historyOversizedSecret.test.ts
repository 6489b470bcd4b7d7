import { describe, expect, it } from "vitest";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import {
  HISTORY_PAYLOAD_BYTES,
  type HistoryRecord,
  type RequestRecord,
} from "../../../src/io/stores/deliveryHistory.js";
import type { Outcome } from "../../../src/streams/types.js";
import { fakeClock } from "../../helpers/gateway.js";

const ACCEPTED: Outcome = { status: 202, body: { status: "accepted", delivery_id: "big-1" } };
const HEAD = { method: "POST", path: "/webhooks/github", headers: { "x-github-delivery": "big-1" } };

describe("delivery history: a payload over the cap", () => {
  it("is judged by the size it was received at, so its secret is never looked for (a body its redaction would bring under the cap is not kept either)", () => {
    const secret = "s".repeat(300);
    const body = Buffer.from(`{"a":"${secret.repeat(Math.ceil(HISTORY_PAYLOAD_BYTES / secret.length))}"}`);
    expect(body.length).toBeGreaterThan(HISTORY_PAYLOAD_BYTES);
    const records: HistoryRecord[] = [];
    const writer = { record: (r: HistoryRecord) => records.push(r), flush: () => {}, close: () => {} };
    const clock = fakeClock(Date.parse("2026-12-07T12:00:00Z"));
    const hooks = historyHooks(writer, clock.now, undefined, undefined, () => secret);
    hooks.request("github", HEAD, body, ACCEPTED);
    const [request] = records.filter((r) => r.kind === "request") as RequestRecord[];
    expect(request?.payload_omitted).toBe("too_large");
    expect(request?.payload).toBeUndefined();
  });
});

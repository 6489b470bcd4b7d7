import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook redeliver of an ID answered twice on one route, with another body the second time", {
  timeout: 90_000,
}, () => {
  it("sends the request that was taken, not the duplicate that never ran", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ "dup-body-route": { secret: "dup-body-secret-7781" } }),
    });
    const at = new Date().toISOString();
    const record = (status: number, outcome: string, payload: string) =>
      JSON.stringify({
        kind: "request",
        id: "dup-1",
        at,
        route: "dup-body-route",
        status,
        outcome,
        content_type: "application/json",
        payload_encoding: "utf8",
        payload,
      });
    gw.home.write(
      "deliveries/history.jsonl",
      `${record(202, "accepted", '{"v":"A-ran"}')}\n${record(200, "duplicate", '{"v":"B-never-ran"}')}\n`,
      0o600,
    );
    const res = await svc(gw.home, ["webhook", "redeliver", "dup-1", "--port", String(gw.gateway.port)]);
    expect(res.code).toBe(0);
    await vi.waitFor(() => {
      const sent = readFileSync(join(gw.home.dir, "deliveries", "history.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.includes('"redelivery_of":"dup-1"'))
        .map((line) => (JSON.parse(line) as { payload?: unknown }).payload);
      // Kept as JSON in the line when the body is JSON.
      expect(sent).toEqual([{ v: "A-ran" }]);
    });
  });
});

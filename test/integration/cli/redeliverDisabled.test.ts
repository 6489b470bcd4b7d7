import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook redeliver to a subscription disabled since", { timeout: 90_000 }, () => {
  it("says that the subscription is disabled, as svc webhook test does, before the gateway's 404", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ "ops-disabled-sub": { secret: "ops-disabled-secret-7731", enabled: false } }),
    );
    const at = new Date().toISOString();
    gw.home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: "ops-redeliver-disabled-1", at, route: "ops-disabled-sub", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`,
      0o600,
    );
    const res = await svc(gw.home, [
      "webhook",
      "redeliver",
      "ops-redeliver-disabled-1",
      "--port",
      String(gw.gateway.port),
    ]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("404 Not Found");
    expect(res.stderr).toContain(
      "Note: ops-disabled-sub is disabled; the gateway will answer 404 until svc webhook enable ops-disabled-sub",
    );
  });
});

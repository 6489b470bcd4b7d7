import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc, svcEach } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook redeliver of a delivery ID longer than the gateway keeps", { timeout: 90_000 }, () => {
  it("finds it by the ID as the sender sent it (recorded as its sha256: digest), and sends it again", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ "ops-long-id-route": { secret: "ops-long-id-secret-5521" } }),
    });
    // 240 characters: past the 200 the gateway keeps, so its history holds the digest.
    const senderId = `ops-long-delivery-${"q".repeat(222)}`;
    const recorded = `sha256:${createHash("sha256").update(senderId, "utf8").digest("hex")}`;
    gw.home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: recorded, at: new Date().toISOString(), route: "ops-long-id-route", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`,
      0o600,
    );
    const port = String(gw.gateway.port);
    const [bySender, byDigest] = await svcEach(gw.home, [
      ["webhook", "redeliver", senderId, "--port", port],
      ["webhook", "redeliver", recorded, "--port", port],
    ]);
    for (const res of [bySender, byDigest]) {
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(`(redelivery of ${recorded} as redelivery-`);
      expect(res.stdout).toContain("202 Accepted");
    }
  });
});

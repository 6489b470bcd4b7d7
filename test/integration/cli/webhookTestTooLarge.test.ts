import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { writeRecordedRequest } from "../../helpers/recordedRequest.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * A body past `max_body_bytes` is answered `413 Payload too large` (spec 8), which names neither the
 * body's size nor the limit: `svc webhook test` and `redeliver` printed the 413 alone. They now add a note
 * with both and the setting that raises the limit.
 */
describe("svc webhook test (and redeliver) of a body over max_body_bytes", { timeout: 90_000 }, () => {
  it("notes the body's size, the limit and where to raise it", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { "static-big": { secret: "static-big-secret-3391" } },
        // Named where it is written: under extra, which wins over the direct key.
        { max_body_bytes: 100_000, extra: { max_body_bytes: 200 } },
      ),
    });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ "big-events": { secret: "big-events-secret-7280", enabled: true } }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const config = `${gw.home.dir}/config.yaml`;
    const payload = JSON.stringify({ event_type: "push", text: "x".repeat(250) });

    const big = await svc(gw.home, ["webhook", "test", "big-events", "--port", port, "--payload", payload]);
    expect(big.code).toBe(1);
    expect(big.stdout).toContain('413 Payload Too Large\n{"error":"Payload too large"}');
    expect(big.stderr).toContain(
      `Note: the test event's body is ${payload.length} bytes, over platforms.webhook.extra.max_body_bytes (200) — raise it in ${config} and reload the gateway (SIGHUP) or restart it\n`,
    );

    // A body the route took while the limit was higher, redelivered after it was lowered.
    writeRecordedRequest(gw.home, {
      id: "big-7702",
      route: "static-big",
      status: 202,
      outcome: "accepted",
      payload,
    });
    const again = await svc(gw.home, ["webhook", "redeliver", "big-7702", "--port", port]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("413 Payload Too Large");
    expect(again.stderr).toContain(
      `Note: the recorded body is ${payload.length} bytes, over platforms.webhook.extra.max_body_bytes (200)`,
    );

    const small = await svc(gw.home, ["webhook", "test", "big-events", "--port", port]);
    expect(small.stdout).toContain("202 Accepted");
    expect(small.stderr).not.toContain("Note:");
  });
});

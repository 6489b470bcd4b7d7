import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { writeRecordedRequest } from "../../helpers/recordedRequest.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * A route whose `rate_limit` is spent answers `429 Rate limit exceeded` (spec 7, 8), whose body says
 * neither the limit nor when the window reopens (the `Retry-After` header does): `svc webhook test` and
 * `redeliver` printed the 429 alone. They now add a note with both and the setting that raises the limit.
 * The gateway's windows run on the test's fake clock, so the seconds are exact.
 */
describe("svc webhook test (and redeliver) answered 429", { timeout: 90_000 }, () => {
  it("notes the route's rate_limit, the seconds until its window reopens (Retry-After) and where to raise it", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ limited: { secret: "limited-secret-5512" } }, { rate_limit: 2 }),
    });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ busy: { secret: "busy-secret-6619", enabled: true } }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const config = `${gw.home.dir}/config.yaml`;
    const test = () => svc(gw.home, ["webhook", "test", "busy", "--port", port]);

    for (const _ of [1, 2]) {
      const accepted = await test();
      expect(accepted.stdout).toContain("202 Accepted");
      expect(accepted.stderr).not.toContain("Note:");
    }
    const limited = await test();
    expect(limited.code).toBe(1);
    expect(limited.stdout).toContain('429 Too Many Requests\n{"error":"Rate limit exceeded"}');
    expect(limited.stderr).toContain(
      `Note: busy's quota is spent: platforms.webhook.rate_limit lets 2 requests a minute through per route (signed or not), and the gateway answers it 429 until its window reopens in 60 s (Retry-After) — send it again then, or raise the limit in ${config} and reload the gateway (SIGHUP)\n`,
    );

    gw.clock.advance(20_000);
    const later = await test();
    expect(later.stderr).toContain("until its window reopens in 40 s (Retry-After)");

    // A redelivery to a spent route says the same of that route.
    writeRecordedRequest(gw.home, {
      id: "lim-4410",
      route: "limited",
      status: 202,
      outcome: "accepted",
      payload: JSON.stringify({ event_type: "push" }),
    });
    for (const _ of [1, 2]) await svc(gw.home, ["webhook", "redeliver", "lim-4410", "--port", port]);
    const again = await svc(gw.home, ["webhook", "redeliver", "lim-4410", "--port", port]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("429 Too Many Requests");
    expect(again.stderr).toContain(
      "Note: limited's quota is spent: platforms.webhook.rate_limit lets 2 requests a minute through per route (signed or not), and the gateway answers it 429 until its window reopens in 60 s (Retry-After)",
    );
  });
});

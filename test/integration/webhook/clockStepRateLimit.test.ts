import { describe, expect, it } from "vitest";
import { startTestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

/**
 * A route's rate-limit window lasts its minute on a clock that is never set: a step of the system clock
 * (NTP) neither gives a sender whose quota is spent a new budget nor holds the window shut.
 */
describe("rate-limit windows across a step of the system clock", { timeout: 30_000 }, () => {
  for (const step of [-3_600_000, 3_600_000]) {
    it(`a step of ${step / 1000} s does not open a new window; the minute still ends it`, async () => {
      const gw = await startTestGateway({
        config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1 }),
      });
      try {
        const post = () => postJson(gw.url("/webhooks/open"), { n: 1 });
        expect((await post()).status).toBe(202);
        gw.clock.advance(10_000);
        gw.clock.step(step);
        const spent = await post();
        expect(spent.status).toBe(429);
        expect(spent.headers.get("retry-after")).toBe("50");
        gw.clock.advance(50_000);
        expect((await post()).status).toBe(202);
      } finally {
        await gw.stop();
      }
    });
  }
});

import { describe, expect, it } from "vitest";
import { startTestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

/**
 * A delivery id stays a duplicate for an hour counted on a clock that is never set: the system clock
 * stepped forward (NTP correcting a clock that ran slow) does not forget the ids seen a moment before, and
 * one stepped back does not keep them for the hours of the step. Across a restart the ids are saved with
 * their system-clock expiry.
 */
describe("delivery-id idempotency across a step of the system clock", { timeout: 30_000 }, () => {
  it("a step forward of two hours leaves an id seen a second before a duplicate; an hour later it is not", async () => {
    const gw = await startTestGateway({ config: webhookConfig({ open: { secret: OPEN } }) });
    try {
      const post = () => postJson(gw.url("/webhooks/open"), { n: 1 }, { "X-Request-ID": "stepped" });
      expect((await post()).status).toBe(202);
      gw.clock.step(2 * 3_600_000);
      gw.clock.advance(1000);
      expect(await post()).toMatchObject({ status: 200, body: { status: "duplicate" } });
      gw.clock.advance(3_600_000);
      expect((await post()).status).toBe(202);
    } finally {
      await gw.stop();
    }
  });

  it("a step back of two hours does not keep an id past its hour", async () => {
    const gw = await startTestGateway({ config: webhookConfig({ open: { secret: OPEN } }) });
    try {
      const post = () => postJson(gw.url("/webhooks/open"), { n: 1 }, { "X-Request-ID": "stepped-back" });
      expect((await post()).status).toBe(202);
      gw.clock.step(-2 * 3_600_000);
      gw.clock.advance(1000);
      expect(await post()).toMatchObject({ status: 200, body: { status: "duplicate" } });
      gw.clock.advance(3_600_000);
      expect((await post()).status).toBe(202);
    } finally {
      await gw.stop();
    }
  });
});

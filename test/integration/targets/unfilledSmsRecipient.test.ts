import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { smsPlatformFor, startFakeTwilio } from "../../fakes/twilio.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * An SMS route's recipient is often a template (`to: "{user.phone}"`) that only some events fill. For an
 * event without the field the text stays `{user.phone}` (with a null field, `null`), which is no number:
 * it was sent to Twilio as the `To`, whose refusal (error 21211) did not say the event lacked the field.
 * As for a chat target's chat_id, the delivery fails before any request, naming why.
 */
const OPEN = "INSECURE_NO_AUTH";
const SID = "AC00000000000000000000000000000001";
const TOKEN = "twilio-auth-token";
let twilio: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  twilio = await startFakeTwilio(SID, TOKEN);
  gw = await startTestGateway({
    config: webhookConfig(
      {
        page: {
          secret: OPEN,
          prompt: "Alert: {alert}",
          deliver: "sms",
          deliver_only: true,
          deliver_extra: { to: "{user.phone}" },
        },
      },
      { rate_limit: 1000 },
      {
        platforms: {
          sms: smsPlatformFor(twilio, SID, TOKEN),
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await twilio.close();
});

const sent = () =>
  twilio.requests
    .filter((r) => r.method === "POST")
    .map((r) => ({ To: r.form?.get("To"), Body: r.form?.get("Body") }));

/** Posts `payload` to the route and returns its status and the log lines it added. */
async function post(payload: unknown): Promise<{ status: number; lines: string[] }> {
  const seen = gw.logs().length;
  const res = await postJson(gw.url("/webhooks/page"), payload);
  return {
    status: res.status,
    lines: gw
      .logs()
      .slice(seen)
      .map((l) => l.msg),
  };
}

describe("an sms recipient template the event does not fill", () => {
  it("an event with the field is delivered to its number", async () => {
    const { status } = await post({ alert: "disk full", user: { phone: "+15554445555" } });
    expect(status).toBe(200);
    expect(sent().at(-1)).toEqual({ To: "+15554445555", Body: "Alert: disk full" });
  });

  it("an event without it is refused naming the template: nothing is sent, not to the home channel either", async () => {
    const before = sent().length;
    const { status, lines } = await post({ alert: "disk full" });
    expect(status).toBe(502);
    expect(sent()).toHaveLength(before);
    expect(lines).toContain(
      '[delivery] sms failed for route page: sms: deliver_extra.to of route "page" did not resolve ("{user.phone}" is a template the event did not fill: it has no such field) — the message is not sent (never redirected to another number)',
    );
  });

  it("an event whose field is null is refused saying so: nothing is sent", async () => {
    const before = sent().length;
    const { status, lines } = await post({ alert: "disk full", user: { phone: null } });
    expect(status).toBe(502);
    expect(sent()).toHaveLength(before);
    expect(lines).toContain(
      `[delivery] sms failed for route page: sms: deliver_extra.to of route "page" did not resolve (the event's field is null) — the message is not sent (never redirected to another number)`,
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTwilio } from "../../fakes/twilio.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message, registryFor } from "./support.js";

/**
 * Twilio's refusals carry a numeric `code` (21211 invalid To, 20003 authentication), the key to its error
 * dictionary (https://www.twilio.com/docs/api/errors). A failed delivery's log line said only the
 * `message`; it now says `(Twilio error <code>)` too. No credential is in either.
 */
const SID = `AC${"1".repeat(32)}`;
const TOKEN = "TW-SECRET-TOKEN";
const OPEN = "INSECURE_NO_AUTH";
let twilio: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  twilio = await startFakeTwilio(SID, TOKEN);
  gw = await startTestGateway({
    config: webhookConfig(
      {
        text: {
          secret: OPEN,
          prompt: "Disk {disk} full",
          deliver: "sms",
          deliver_only: true,
          deliver_extra: { to: "{to}" },
        },
      },
      { rate_limit: 1000 },
      {
        platforms: {
          sms: {
            enabled: true,
            account_sid: SID,
            auth_token: TOKEN,
            from: "+15550000000",
            base_url: twilio.url,
          },
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await twilio.close();
});

describe("sms: a Twilio refusal is logged with its error code", () => {
  it("a To without its country code: the log line names error 21211, without the auth token", async () => {
    const res = await postJson(gw.url("/webhooks/text"), { disk: "/var", to: "5552223333" });
    expect(res.status).toBe(502);
    const lines = gw.logs().filter((l) => l.msg.includes("is not a valid phone number"));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toContain(
      "sms: create message: HTTP 400 — The 'To' number 5552223333 is not a valid phone number. (Twilio error 21211)",
    );
    expect(JSON.stringify(gw.logs())).not.toContain(TOKEN);
  });

  it("a wrong auth token: the credentials check and a send name error 20003", async () => {
    const target = registryFor({
      sms: {
        enabled: true,
        account_sid: SID,
        auth_token: "WRONG-TOKEN",
        from: "+15550000000",
        base_url: twilio.url,
      },
    }).get("sms");
    await expect(target?.check?.()).rejects.toThrow(
      "sms: account: HTTP 401 — Authenticate (Twilio error 20003)",
    );
    await expect(target?.send(message("Disk full", { chat_id: "+15551112222" }))).rejects.toThrow(
      "sms: create message: HTTP 401 — Authenticate (Twilio error 20003)",
    );
  });
});

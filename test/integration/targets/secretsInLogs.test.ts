import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, type RecordedRequest, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A platform that answers a refusal by quoting what it received (some proxies and self-hosted servers
 * do): the credentials in any form the gateway sent them — Basic auth's base64, a query-string
 * percent-encoding — must not reach the gateway log.
 */
const OPEN = "INSECURE_NO_AUTH";
const TWILIO_SID = "AC0123456789abcdef";
const TWILIO_TOKEN = "twilio/auth+token=1";
const BB_PASSWORD = "p@ss word/&=?";
const TG_SECRET = "AAH-abc_DEF+ghi/jkl=mno~pqr";
const TG_TOKEN = `123456789:${TG_SECRET}`;

function echoRefusal(request: RecordedRequest) {
  // The Bot API's refusals quote what they were sent in `description`; here only the token's secret part.
  if (request.url.startsWith("/bot"))
    return { status: 400, json: { ok: false, description: `Bad Request: ${TG_SECRET}` } };
  const echoed = `${request.method} ${request.url} authorization=${String(request.headers.authorization)}`;
  return { status: 401, json: { message: echoed, error: echoed } };
}

let api: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  api = await startFakeApi(echoRefusal);
  gw = await startTestGateway({
    config: webhookConfig(
      {
        sms: {
          secret: OPEN,
          prompt: "hi",
          deliver: "sms",
          deliver_only: true,
          deliver_extra: { chat_id: "+15550001" },
        },
        bb: {
          secret: OPEN,
          prompt: "hi",
          deliver: "bluebubbles",
          deliver_only: true,
          deliver_extra: { chat_id: "iMessage;-;+15550001" },
        },
        tg: {
          secret: OPEN,
          prompt: "hi",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "42" },
        },
      },
      { rate_limit: 1000 },
      {
        platforms: {
          sms: {
            enabled: true,
            account_sid: TWILIO_SID,
            auth_token: TWILIO_TOKEN,
            from: "+15550002",
            base_url: api.url,
          },
          bluebubbles: { enabled: true, password: BB_PASSWORD, base_url: api.url },
          telegram: { enabled: true, token: TG_TOKEN, base_url: api.url },
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await api.close();
});

describe("credentials never reach the log in an encoded form", () => {
  it("sms: the Basic auth credentials (base64 of sid:token) quoted back by the platform are redacted", async () => {
    const res = await postJson(gw.url("/webhooks/sms"), {});
    expect(res).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    const basic = Buffer.from(`${TWILIO_SID}:${TWILIO_TOKEN}`).toString("base64");
    expect(api.requests.some((r) => r.headers.authorization === `Basic ${basic}`)).toBe(true);
    const log = JSON.stringify(gw.logs());
    expect(log).toContain("[delivery] sms failed for route sms");
    expect(log).not.toContain(basic);
    expect(log).not.toContain(TWILIO_TOKEN);
  });

  it("bluebubbles: the password as percent-encoded in the query string is redacted", async () => {
    const res = await postJson(gw.url("/webhooks/bb"), {});
    expect(res).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    expect(api.requests.some((r) => r.url.includes(encodeURIComponent(BB_PASSWORD)))).toBe(true);
    const log = JSON.stringify(gw.logs());
    expect(log).toContain("[delivery] bluebubbles failed for route bb");
    expect(log).not.toContain(encodeURIComponent(BB_PASSWORD));
    expect(log).not.toContain(BB_PASSWORD);
  });

  it("telegram: the token's secret part quoted back alone, without the bot id, is redacted", async () => {
    const res = await postJson(gw.url("/webhooks/tg"), {});
    expect(res).toMatchObject({ status: 502, body: { error: "Delivery failed" } });
    expect(api.requests.some((r) => r.url === `/bot${TG_TOKEN}/sendMessage`)).toBe(true);
    const log = JSON.stringify(gw.logs());
    expect(log).toContain("[delivery] telegram failed for route tg");
    expect(log).toContain("Bad Request: [redacted]");
    expect(log).not.toContain(TG_SECRET);
  });
});

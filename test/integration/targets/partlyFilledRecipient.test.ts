import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { smsPlatformFor, startFakeTwilio } from "../../fakes/twilio.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A recipient template with text around its placeholder (`chat_id: "@{team}_alerts"`, `to: "+1{user.phone}"`)
 * that the event did not fill renders with the placeholder still in it, `@{team}_alerts`. That is no chat and
 * no number either: it was sent as one, and the platform's refusal ("chat not found", Twilio's 21211) did not
 * say the event lacked the field. As for a recipient that is the placeholder alone, the delivery fails before
 * any request, naming the placeholder, and is never redirected to the home channel.
 */
const OPEN = "INSECURE_NO_AUTH";
const SID = "AC00000000000000000000000000000001";
const TOKEN = "twilio-auth-token";
let telegram: FakeApi;
let twilio: FakeApi;
let gw: TestGateway;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  twilio = await startFakeTwilio(SID, TOKEN);
  gw = await startTestGateway({
    config: webhookConfig(
      {
        team: {
          secret: OPEN,
          prompt: "Alert: {alert}",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "@{team}_alerts" },
        },
        page: {
          secret: OPEN,
          prompt: "Alert: {alert}",
          deliver: "sms",
          deliver_only: true,
          deliver_extra: { to: "+1{user.phone}" },
        },
      },
      { rate_limit: 1000 },
      {
        platforms: {
          telegram: { enabled: true, token: "1:T", base_url: telegram.url, home_channel: "-100999" },
          sms: smsPlatformFor(twilio, SID, TOKEN),
        },
      },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
  await telegram.close();
  await twilio.close();
});

const chats = () =>
  telegram.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => (r.json as { chat_id: unknown }).chat_id);
const numbers = () => twilio.requests.filter((r) => r.method === "POST").map((r) => r.form?.get("To"));

/** Posts `payload` to `route` and returns its status and the log lines it added. */
async function post(route: string, payload: unknown): Promise<{ status: number; lines: string[] }> {
  const seen = gw.logs().length;
  const res = await postJson(gw.url(`/webhooks/${route}`), payload);
  return {
    status: res.status,
    lines: gw
      .logs()
      .slice(seen)
      .map((l) => l.msg),
  };
}

describe("a recipient template with text around a placeholder the event did not fill", () => {
  it("an event with the fields is delivered to the chat and the number they make", async () => {
    expect((await post("team", { alert: "a", team: "ops" })).status).toBe(200);
    expect(chats().at(-1)).toBe("@ops_alerts");
    expect((await post("page", { alert: "a", user: { phone: "5552224444" } })).status).toBe(200);
    expect(numbers().at(-1)).toBe("+15552224444");
  });

  it("telegram: refused naming the placeholder; sent neither to @{team}_alerts nor to the home channel", async () => {
    const before = chats().length;
    const { status, lines } = await post("team", { alert: "b" });
    expect(status).toBe(502);
    expect(chats()).toHaveLength(before);
    expect(lines).toContain(
      '[delivery] telegram failed for route team: telegram: deliver_extra.chat_id of route "team" did not resolve ("@{team}_alerts" holds {team}, a placeholder the event did not fill: it has no such field) — the message is not sent (never redirected to another chat)',
    );
  });

  it("sms: refused naming the placeholder; sent neither to +1{user.phone} nor to the home channel", async () => {
    const before = numbers().length;
    const { status, lines } = await post("page", { alert: "c", user: {} });
    expect(status).toBe(502);
    expect(numbers()).toHaveLength(before);
    expect(lines).toContain(
      '[delivery] sms failed for route page: sms: deliver_extra.to of route "page" did not resolve ("+1{user.phone}" holds {user.phone}, a placeholder the event did not fill: it has no such field) — the message is not sent (never redirected to another number)',
    );
  });

  it("a value the event filled with braces of JSON (a mapping) is no placeholder: sent as it is", async () => {
    const before = chats().length;
    await post("team", { alert: "d", team: { id: 1 } });
    expect(chats().slice(before)).toEqual(['@{"id":1}_alerts']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startFakeTwilio } from "../../fakes/twilio.js";
import { message, registryFor } from "./support.js";

/**
 * Ids as users copy them from the platform's console: a Twilio Messaging Service SID (MG…) as the sender
 * (Twilio takes it as `MessagingServiceSid`, not as `From`), and a Home Assistant service written with its
 * domain (`notify.mobile_app_pixel_8`, as its developer tools show it).
 */
const SID = `AC${"1".repeat(32)}`;
let twilio: FakeApi;
let ha: FakeApi;
beforeAll(async () => {
  twilio = await startFakeTwilio(SID, "TW-TOKEN");
  ha = await startFakeApi(() => ({ json: [] }));
});
afterAll(async () => {
  await twilio.close();
  await ha.close();
});

describe("sms: sender", () => {
  const sms = (from: string) =>
    registryFor({
      sms: { enabled: true, account_sid: SID, auth_token: "TW-TOKEN", from, base_url: twilio.url },
    }).get("sms");

  it("a Messaging Service SID is sent as MessagingServiceSid", async () => {
    twilio.requests.length = 0;
    const service = `MG${"a".repeat(32)}`;
    await sms(service)?.send(message("Disk full", { chat_id: "+15551112222" }));
    expect(Object.fromEntries(twilio.requests[0]?.form ?? [])).toEqual({
      To: "+15551112222",
      MessagingServiceSid: service,
      Body: "Disk full",
    });
  });

  it("a phone number is sent as From", async () => {
    twilio.requests.length = 0;
    await sms("+15550000000")?.send(message("Disk full", { chat_id: "+15551112222" }));
    expect(Object.fromEntries(twilio.requests[0]?.form ?? [])).toEqual({
      To: "+15551112222",
      From: "+15550000000",
      Body: "Disk full",
    });
  });

  it("a number written with spaces, dashes, dots or parentheses is sent in E.164, as Twilio requires", async () => {
    twilio.requests.length = 0;
    const target = registryFor({
      sms: {
        enabled: true,
        account_sid: SID,
        auth_token: "TW-TOKEN",
        from: "+1 555-000-0000",
        // The national trunk prefix in parentheses is not dialled from abroad: left out.
        home_channel: "+44 (0)20 7946 0958",
        base_url: twilio.url,
      },
    }).get("sms");
    await expect(target?.send(message("a", { chat_id: "+1 (555) 111-2222" }))).resolves.toMatchObject({
      chatId: "+15551112222",
    });
    await expect(target?.send(message("b", { to: "whatsapp:+1 555.111.3333" }))).resolves.toMatchObject({
      chatId: "whatsapp:+15551113333",
    });
    await expect(target?.send(message("c"))).resolves.toMatchObject({ chatId: "+442079460958" });
    expect(twilio.requests.map((r) => [r.form?.get("To"), r.form?.get("From")])).toEqual([
      ["+15551112222", "+15550000000"],
      ["whatsapp:+15551113333", "+15550000000"],
      ["+442079460958", "+15550000000"],
    ]);
  });

  it("a text over 1600 characters goes out as several messages Twilio accepts", async () => {
    twilio.requests.length = 0;
    const text = Array.from({ length: 60 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
    await expect(
      sms("+15550000000")?.send(message(text, { chat_id: "+15551112222" })),
    ).resolves.toMatchObject({
      parts: 2,
    });
    expect(twilio.requests.map((r) => r.form?.get("Body")).join("")).toBe(text);
  });
});

describe("sms: a refusal after the first message went out", () => {
  it("names the part that failed and that part 1 was delivered", async () => {
    const text = Array.from({ length: 60 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
    twilio.enqueue(
      { status: 201, json: { sid: "SM1", status: "queued" } },
      {
        status: 400,
        json: { code: 21610, message: "Attempt to send to unsubscribed recipient", status: 400 },
      },
    );
    const registry = registryFor({
      sms: {
        enabled: true,
        account_sid: SID,
        auth_token: "TW-TOKEN",
        from: "+15550000000",
        base_url: twilio.url,
      },
    });
    await expect(registry.get("sms")?.send(message(text, { chat_id: "+15551112222" }))).rejects.toThrow(
      "sms: create message: HTTP 400 — Attempt to send to unsubscribed recipient (Twilio error 21610) (part 2 of 2; part 1 was delivered)",
    );
  });
});

describe("home_automation: service names", () => {
  it("notify.<service> calls notify/<service>", async () => {
    ha.requests.length = 0;
    const registry = registryFor({ home_automation: { enabled: true, token: "HA", base_url: ha.url } });
    await registry
      .get("home_automation")
      ?.send(message("Door open", { chat_id: "notify.mobile_app_pixel_8" }));
    expect(ha.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/services/notify/mobile_app_pixel_8",
    ]);
    expect(ha.requests[0]?.json).toEqual({ message: "Door open" });
  });

  it("a service that is notify. and nothing more (notify.{device} from an event whose device is empty) fails, not posted as a persistent notification", async () => {
    ha.requests.length = 0;
    const registry = registryFor({ home_automation: { enabled: true, token: "HA", base_url: ha.url } });
    const target = registry.get("home_automation");
    await expect(target?.send(message("Door open", { chat_id: "notify." }))).rejects.toThrow(
      'home_automation: "notify." names no notify service (nothing follows "notify.")',
    );
    await expect(target?.send(message("Door open", { service: " notify.  " }))).rejects.toThrow(
      '"notify." names no notify service',
    );
    expect(ha.requests).toEqual([]);
  });

  it("a deliver_extra.title that renders blank is no title: notify gets none, a persistent notification the default", async () => {
    ha.requests.length = 0;
    const registry = registryFor({ home_automation: { enabled: true, token: "HA", base_url: ha.url } });
    const target = registry.get("home_automation");
    await target?.send(message("Door open", { chat_id: "mobile_app_pixel_8", title: "  " }));
    await target?.send(message("Door open", { title: "" }));
    expect(ha.requests.map((r) => r.json)).toEqual([
      { message: "Door open" },
      { message: "Door open", title: "svc: alerts" },
    ]);
  });
});

import { type FakeApi, startFakeApi } from "./httpFake.js";

/**
 * A fake Twilio Messages API (`POST /2010-04-01/Accounts/<sid>/Messages.json`, form-encoded, Basic auth
 * `sid:token`) with Twilio's own refusals: 401 code 20003 for bad credentials, 400 code 21604 without `To`,
 * 21603 without a sender (`From` or `MessagingServiceSid`), 21602 without `Body`, 21617 past 1600
 * characters, 21211 for a `To` that is not E.164 (`+14155552671`: no spaces, dashes or parentheses) or a
 * channel address (`whatsapp:+14155552671`). Success is 201 with the message resource.
 */
export async function startFakeTwilio(sid: string, token: string): Promise<FakeApi> {
  let next = 1;
  const refuse = (status: number, code: number, message: string) => ({
    status,
    json: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
  });
  return startFakeApi((request) => {
    const basic = `Basic ${Buffer.from(`${sid}:${token}`).toString("base64")}`;
    if (request.headers.authorization !== basic) return refuse(401, 20003, "Authenticate");
    if (request.method === "GET" && request.path === `/2010-04-01/Accounts/${sid}.json`)
      return { json: { sid, friendly_name: "svc test account", status: "active" } };
    if (request.method !== "POST" || request.path !== `/2010-04-01/Accounts/${sid}/Messages.json`)
      return refuse(404, 20404, "The requested resource was not found");
    const form = request.form ?? new URLSearchParams();
    const to = form.get("To");
    const from = form.get("From");
    const service = form.get("MessagingServiceSid");
    const body = form.get("Body") ?? "";
    if (!to) return refuse(400, 21604, "A 'To' phone number is required.");
    if (!/^(?:[a-z]+:)?\+[1-9]\d{1,14}$/.test(to))
      return refuse(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (!from && !service) return refuse(400, 21603, "A 'From' phone number is required.");
    if (body === "") return refuse(400, 21602, "Message body is required.");
    if (body.length > 1600)
      return refuse(400, 21617, "The concatenated message body exceeds the 1600 character limit.");
    return {
      status: 201,
      json: {
        sid: `SM${String(next++).padStart(32, "0")}`,
        to,
        from: from ?? null,
        messaging_service_sid: service ?? null,
        body,
        status: service ? "accepted" : "queued",
      },
    };
  });
}

/** `platforms.sms` pointed at a fake from `startFakeTwilio(sid, token)`, with a sender and a home number. */
export function smsPlatformFor(api: FakeApi, sid: string, token: string): Record<string, unknown> {
  return {
    enabled: true,
    account_sid: sid,
    auth_token: token,
    from: "+15550001111",
    base_url: api.url,
    home_channel: "+15552223333",
  };
}

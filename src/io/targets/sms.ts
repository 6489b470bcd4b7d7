import type { PlatformConfig } from "../../config/sections/platforms.js";
import { partlyDelivered, recipientQueue, resolveChatId } from "./chat.js";
import { platformClient, stringField } from "./client.js";
import { messageParts } from "./split.js";
import { type DeliveryTarget, runOnce } from "./target.js";

/** Twilio Messages API: `Body` up to 1600 characters. */
export const SMS_LIMIT = 1600;

const MESSAGING_SERVICE = /^MG[0-9a-f]{32}$/i;

/** Twilio-compatible `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, HTTP basic auth. */
export function smsTarget(settings: PlatformConfig<"sms">): DeliveryTarget {
  const sid = settings.account_sid ?? "";
  const authToken = settings.auth_token ?? "";
  const basic = Buffer.from(`${sid}:${authToken}`).toString("base64");
  const api = platformClient("sms", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Basic ${basic}` },
    secrets: [authToken, basic],
  });
  const account = `/2010-04-01/Accounts/${encodeURIComponent(sid)}`;
  // Twilio sends either from a number (`From`) or through a Messaging Service (`MessagingServiceSid`, MG…).
  const from = settings.from ?? "";
  const sender = MESSAGING_SERVICE.test(from) ? { MessagingServiceSid: from } : { From: from };
  const oneAtATime = recipientQueue();
  return {
    name: "sms",
    check: async (signal) =>
      stringField(await api.call("account", "GET", `${account}.json`, { signal }), "friendly_name"),
    async send(message, signal, options = {}) {
      const to = resolveChatId("sms", message, settings.home_channel, ["chat_id", "to"]);
      const parts = messageParts(message.text, SMS_LIMIT);
      // One number's deliveries go one after another: the parts of two long texts do not interleave.
      await oneAtATime(to, async () => {
        for (const [index, body] of parts.entries()) {
          const form = { To: to, ...sender, Body: body };
          await (options.runStep ?? runOnce)(() =>
            api.call("create message", "POST", `${account}/Messages.json`, { form, signal }),
          ).catch((err: unknown) => {
            throw index === 0 ? err : partlyDelivered(err, index, parts.length);
          });
        }
      });
      return { chatId: to, parts: parts.length };
    },
  };
}

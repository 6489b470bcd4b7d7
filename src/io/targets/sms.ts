import type { PlatformConfig } from "../../config/sections/platforms.js";
import { resolveChatId } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import { splitMessage } from "./split.js";
import { type DeliveryTarget, runOnce } from "./target.js";

/** Twilio Messages API: `Body` up to 1600 characters. */
export const SMS_LIMIT = 1600;

/** Twilio-compatible `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, HTTP basic auth. */
export function smsTarget(settings: PlatformConfig<"sms">): DeliveryTarget {
  const sid = settings.account_sid ?? "";
  const authToken = settings.auth_token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Basic ${Buffer.from(`${sid}:${authToken}`).toString("base64")}` };
  const secrets = [authToken];
  const account = `/2010-04-01/Accounts/${encodeURIComponent(sid)}`;
  return {
    name: "sms",
    async check(signal) {
      const url = joinUrl(settings.base_url, `${account}.json`);
      const answer = await httpCall({ platform: "sms", action: "account", method: "GET", url, headers, timeoutMs, signal, secrets });
      return (answer.body as { friendly_name?: string } | undefined)?.friendly_name;
    },
    async send(message, signal, options = {}) {
      const to = resolveChatId("sms", message, settings.home_channel, ["chat_id", "to"]);
      const runStep = options.runStep ?? runOnce;
      const parts = splitMessage(message.text, SMS_LIMIT);
      for (const body of parts) {
        await runStep(() =>
          httpCall({
            platform: "sms",
            action: "create message",
            method: "POST",
            url: joinUrl(settings.base_url, `${account}/Messages.json`),
            headers,
            form: { To: to, From: settings.from ?? "", Body: body },
            timeoutMs,
            signal,
            secrets,
          }),
        );
      }
      return { chatId: to, parts: parts.length };
    },
  };
}

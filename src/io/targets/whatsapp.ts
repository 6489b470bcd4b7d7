import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** WhatsApp Cloud API text messages: `text.body` up to 4096 characters. */
export const WHATSAPP_LIMIT = 4096;

export function whatsappTarget(settings: PlatformConfig<"whatsapp">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Bearer ${token}` };
  const secrets = [token];
  const phonePath = `/${encodeURIComponent(settings.api_version)}/${encodeURIComponent(settings.phone_number_id ?? "")}`;
  return {
    name: "whatsapp",
    chat: true,
    async check(signal) {
      const url = joinUrl(settings.base_url, phonePath);
      const answer = await httpCall({ platform: "whatsapp", action: "phone number", method: "GET", url, headers, timeoutMs, signal, secrets });
      return (answer.body as { display_phone_number?: string } | undefined)?.display_phone_number;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "whatsapp",
          limit: WHATSAPP_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (to, body) =>
            httpCall({
              platform: "whatsapp",
              action: "send message",
              method: "POST",
              url: joinUrl(settings.base_url, `${phonePath}/messages`),
              headers,
              json: { messaging_product: "whatsapp", recipient_type: "individual", to, type: "text", text: { preview_url: false, body } },
              timeoutMs,
              signal,
              secrets,
            }),
        },
        message,
        options,
      );
    },
  };
}

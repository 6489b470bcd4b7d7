import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/** WhatsApp Cloud API text messages: `text.body` up to 4096 characters. */
export const WHATSAPP_LIMIT = 4096;

export function whatsappTarget(settings: PlatformConfig<"whatsapp">): DeliveryTarget {
  const api = tokenClient("whatsapp", settings);
  const phonePath = `/${encodeURIComponent(settings.api_version)}/${encodeURIComponent(settings.phone_number_id ?? "")}`;
  return chatTarget({
    name: "whatsapp",
    limit: WHATSAPP_LIMIT,
    homeChannel: settings.home_channel,
    check: async (signal) =>
      stringField(await api.call("phone number", "GET", phonePath, { signal }), "display_phone_number"),
    sendPart: ({ chatId, text, signal }) =>
      api.call("send message", "POST", `${phonePath}/messages`, {
        json: {
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to: chatId,
          type: "text",
          text: { preview_url: false, body: text },
        },
        signal,
      }),
  });
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { platformClient, stringField } from "./client.js";
import type { ThrottleRule } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** WhatsApp Cloud API text messages: `text.body` up to 4096 characters. */
export const WHATSAPP_LIMIT = 4096;

/**
 * Cloud API error codes that mean "try again later", whatever the HTTP status (Meta: handle errors by
 * `error.code`, not by status): throttling 4, 80007, 130429, 131056 and the temporary 2, 131000, 131016
 * ("Service unavailable": a service is temporarily unavailable), 133004.
 */
const TRANSIENT_CODES = new Set([2, 4, 80007, 130429, 131000, 131016, 131056, 133004]);

export const whatsappThrottle: ThrottleRule = (_status, body) => {
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === "number" && TRANSIENT_CODES.has(code) ? {} : undefined;
};

export function whatsappTarget(settings: PlatformConfig<"whatsapp">): DeliveryTarget {
  const token = settings.token ?? "";
  const api = platformClient("whatsapp", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Bearer ${token}` },
    secrets: [token],
    throttled: whatsappThrottle,
  });
  const phonePath = `/${encodeURIComponent(settings.api_version)}/${encodeURIComponent(settings.phone_number_id ?? "")}`;
  return chatTarget({
    name: "whatsapp",
    limit: WHATSAPP_LIMIT,
    markdown: true,
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

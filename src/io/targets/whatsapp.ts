import type { PlatformConfig } from "../../config/sections/platforms.js";
import { scrub } from "../credentials.js";
import { cutText } from "../cutText.js";
import { chatTarget } from "./chat.js";
import { baseUrlOf, platformClient, stringField } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import type { HttpAnswer, ThrottleRule } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

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

/**
 * A Cloud API refusal says what to do only in `error.error_data.details` ("Message failed to send because
 * more than 24 hours have passed since the customer last replied to this number."), next to a terse
 * `error.message` ("(#131047) Re-engagement message"): the details are added to the failure (on one line,
 * cut at 300 characters, without the token).
 */
export function withErrorDetails(err: unknown, secrets: readonly string[]): unknown {
  if (!(err instanceof DeliveryError)) return err;
  const details = (err.answer as { error?: { error_data?: { details?: unknown } } } | undefined)?.error
    ?.error_data?.details;
  if (typeof details !== "string") return err;
  const text = cutText(scrub(details, secrets).replace(/\s+/g, " ").trim(), 300);
  if (text === "" || err.message.includes(text)) return err;
  return new DeliveryError(`${err.message}: ${text}`, err.transient, err.retryAfterSeconds, err.answer);
}

export function whatsappTarget(settings: PlatformConfig<"whatsapp">, deps: TargetDeps): DeliveryTarget {
  const token = settings.token ?? "";
  const api = platformClient("whatsapp", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Bearer ${token}` },
    secrets: [token],
    credentials: "platforms.whatsapp.token",
    throttled: whatsappThrottle,
  });
  const phonePath = `/${encodeURIComponent(settings.api_version)}/${encodeURIComponent(settings.phone_number_id ?? "")}`;
  return chatTarget({
    name: "whatsapp",
    sleep: deps.sleep,
    limit: WHATSAPP_LIMIT,
    markdown: true,
    ...homeChannelOf(settings),
    check: async (signal) =>
      stringField(await api.call("phone number", "GET", phonePath, { signal }), "display_phone_number"),
    sendPart: ({ chatId, text, signal }) =>
      api
        .call("send message", "POST", `${phonePath}/messages`, {
          json: {
            messaging_product: "whatsapp",
            recipient_type: "individual",
            to: chatId,
            type: "text",
            text: { preview_url: false, body: text },
          },
          signal,
        })
        .catch((err: unknown) => {
          throw withErrorDetails(err, [token]);
        }),
    // WhatsApp answers with the user's WhatsApp id (`contacts[0].wa_id`), which their incoming messages carry
    // and a chat's session is keyed by; it can differ from the number written (Brazil's mobile numbers).
    deliveredTo: (chatId, answer) => {
      const contacts = ((answer as HttpAnswer | undefined)?.body as { contacts?: unknown } | undefined)
        ?.contacts;
      const waId = Array.isArray(contacts)
        ? (contacts[0] as { wa_id?: unknown } | undefined)?.wa_id
        : undefined;
      return typeof waId === "string" && waId !== "" ? waId : chatId;
    },
  });
}

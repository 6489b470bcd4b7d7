import type { PlatformConfig } from "../../config/sections/platforms.js";
import {
  partlyDelivered,
  partsToSend,
  recipientQueue,
  refuseUnfilledRecipient,
  resolveChatId,
} from "./chat.js";
import { baseUrlOf, platformClient, stringField } from "./client.js";
import { credentialsNote } from "./refusedRecipient.js";
import { messageParts } from "./split.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/** Twilio Messages API: `Body` up to 1600 characters. */
export const SMS_LIMIT = 1600;

const MESSAGING_SERVICE = /^MG[0-9a-f]{32}$/i;

/** A phone number as people write it, `+1 (555) 222-3333`, perhaps after a channel (`whatsapp:`). */
const WRITTEN_NUMBER = /^((?:[a-z]+:)?\+)([\d\s().-]+)$/i;

/**
 * Twilio takes numbers in E.164 only (`+15552223333`) and refuses one written with spaces, dashes, dots or
 * parentheses (error 21211): those are dropped, and so is a national trunk prefix written in parentheses
 * after the country code (`+44 (0)20 7946 0958`, `+49 (0)30 123`), which is not dialled from abroad: kept,
 * its 0 made another number. Anything else (a number without its country code, an alphanumeric sender) is
 * sent as written.
 */
export function e164(number: string): string {
  const written = WRITTEN_NUMBER.exec(number);
  if (written === null) return number;
  const digits = (written[2] ?? "").replace(/^(\s*\d{1,3}[\s.-]*)\(0\)/, "$1");
  return `${written[1]}${digits.replace(/[\s().-]/g, "")}`;
}

/** Twilio's error for an account SID and auth token it does not accept (HTTP 401 "Authenticate"). */
const AUTHENTICATE = 20003;

/**
 * A Twilio refusal with its error code (`{"code": 21211, "message": ...}`), the key to Twilio's error
 * dictionary (https://www.twilio.com/docs/api/errors): `... is not a valid phone number. (Twilio error 21211)`.
 */
function withTwilioCode(err: unknown): unknown {
  if (!(err instanceof DeliveryError)) return err;
  const code = (err.answer as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== "number" || !Number.isInteger(code)) return err;
  return new DeliveryError(
    `${err.message} (Twilio error ${code})${code === AUTHENTICATE ? credentialsNote("platforms.sms.account_sid and platforms.sms.auth_token") : ""}`,
    err.transient,
    err.retryAfterSeconds,
    err.answer,
  );
}

/** Twilio-compatible `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, HTTP basic auth. */
export function smsTarget(settings: PlatformConfig<"sms">, deps: TargetDeps): DeliveryTarget {
  const sid = settings.account_sid ?? "";
  const authToken = settings.auth_token ?? "";
  const basic = Buffer.from(`${sid}:${authToken}`).toString("base64");
  const api = platformClient("sms", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Basic ${basic}` },
    secrets: [authToken, basic],
  });
  const account = `/2010-04-01/Accounts/${encodeURIComponent(sid)}`;
  // Twilio sends either from a number (`From`) or through a Messaging Service (`MessagingServiceSid`, MG…).
  const from = e164(settings.from ?? "");
  const sender = MESSAGING_SERVICE.test(from) ? { MessagingServiceSid: from } : { From: from };
  const oneAtATime = recipientQueue(deps.sleep);
  return {
    name: "sms",
    check: async (signal) =>
      stringField(
        await api.call("account", "GET", `${account}.json`, { signal }).catch((err: unknown) => {
          throw withTwilioCode(err);
        }),
        "friendly_name",
      ),
    async send(message, signal, options = {}) {
      refuseUnfilledRecipient("sms", message, ["chat_id", "to"], "number");
      const to = e164(resolveChatId("sms", message, settings.home_channel, ["chat_id", "to"]));
      const parts = messageParts(message.text, SMS_LIMIT);
      // One number's deliveries go one after another: the parts of two long texts do not interleave.
      await oneAtATime(to, options, signal, async (runStep) => {
        for (const [index, body] of partsToSend(parts, options.fromPart)) {
          const form = { To: to, ...sender, Body: body };
          await runStep(
            () =>
              api
                .call("create message", "POST", `${account}/Messages.json`, { form, signal })
                .catch((err: unknown) => {
                  throw withTwilioCode(err);
                }),
            index,
          ).catch((err: unknown) => {
            throw index === 0 ? err : partlyDelivered(err, index, parts.length);
          });
        }
      });
      return { chatId: to, parts: parts.length };
    },
  };
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/**
 * signal-cli-rest-api (github.com/bbernhard/signal-cli-rest-api): `POST /v2/send`.
 * Signal clients turn texts past 2000 characters into attachments, so parts stay within 2000.
 */
export const SIGNAL_LIMIT = 2000;

export function signalTarget(settings: PlatformConfig<"signal">): DeliveryTarget {
  const number = settings.number ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  return {
    name: "signal",
    chat: true,
    async check(signal) {
      const url = joinUrl(settings.base_url, "/v1/accounts");
      const answer = await httpCall({ platform: "signal", action: "list accounts", method: "GET", url, timeoutMs, signal });
      const accounts = Array.isArray(answer.body) ? (answer.body as unknown[]) : [];
      if (!accounts.includes(number)) {
        throw new Error(`signal: account ${number} is not registered with the signal-cli REST API at ${settings.base_url} — register or link it first`);
      }
      return number;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "signal",
          limit: SIGNAL_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (recipient, text) =>
            httpCall({
              platform: "signal",
              action: "send",
              method: "POST",
              url: joinUrl(settings.base_url, "/v2/send"),
              json: { message: text, number, recipients: [recipient] },
              timeoutMs,
              signal,
            }),
        },
        message,
        options,
      );
    },
  };
}

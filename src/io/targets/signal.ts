import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { platformClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/**
 * signal-cli-rest-api (github.com/bbernhard/signal-cli-rest-api): `POST /v2/send`.
 * Signal clients turn texts past 2000 characters into attachments, so parts stay within 2000.
 */
export const SIGNAL_LIMIT = 2000;

export function signalTarget(settings: PlatformConfig<"signal">): DeliveryTarget {
  const number = settings.number ?? "";
  const api = platformClient("signal", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    // `/v2/send` answers 201 with `{"timestamp": ...}`; older signal-cli-rest-api releases with no body.
    answers: "json or empty",
  });
  return chatTarget({
    name: "signal",
    limit: SIGNAL_LIMIT,
    homeChannel: settings.home_channel,
    async check(signal) {
      const answer = await api.call("list accounts", "GET", "/v1/accounts", { signal });
      const accounts = Array.isArray(answer.body) ? (answer.body as unknown[]) : [];
      if (!accounts.includes(number)) {
        throw new Error(
          `signal: account ${number} is not registered with the signal-cli REST API at ${settings.base_url} — register or link it first`,
        );
      }
      return number;
    },
    sendPart: ({ chatId, text, signal }) =>
      api.call("send", "POST", "/v2/send", { json: { message: text, number, recipients: [chatId] }, signal }),
  });
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { numericOrString, sendChat, threadOf } from "./chat.js";
import { httpCall, joinUrl, refused } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** Bot API: https://core.telegram.org/bots/api#sendmessage (text 1-4096 characters). */
export const TELEGRAM_LIMIT = 4096;

export function telegramTarget(settings: PlatformConfig<"telegram">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const secrets = [token];
  // The token is part of the path: this URL must never reach a log line or an error message.
  const methodUrl = (method: string) => joinUrl(settings.base_url, `/bot${token}/${method}`);

  async function call(method: string, json: unknown, signal?: AbortSignal) {
    const answer = await httpCall({ platform: "telegram", action: method, method: "POST", url: methodUrl(method), json, timeoutMs, signal, secrets });
    const body = answer.body as { ok?: boolean; description?: string; result?: unknown } | undefined;
    if (body?.ok !== true) throw refused("telegram", method, body?.description ?? answer.text, secrets);
    return body.result;
  }

  return {
    name: "telegram",
    chat: true,
    async check(signal) {
      const me = (await call("getMe", {}, signal)) as { username?: string } | undefined;
      return me?.username === undefined ? undefined : `@${me.username}`;
    },
    send(message, signal, options) {
      const thread = threadOf(message);
      return sendChat(
        {
          platform: "telegram",
          limit: TELEGRAM_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (chatId, text) =>
            call(
              "sendMessage",
              {
                chat_id: numericOrString(chatId),
                text,
                ...(thread === undefined ? {} : { message_thread_id: numericOrString(thread) }),
              },
              signal,
            ),
        },
        message,
        options,
      );
    },
  };
}

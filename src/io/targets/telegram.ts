import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, numericOrString, threadOf } from "./chat.js";
import { platformClient } from "./client.js";
import { refused } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** Bot API: https://core.telegram.org/bots/api#sendmessage (text 1-4096 characters). */
export const TELEGRAM_LIMIT = 4096;

export function telegramTarget(settings: PlatformConfig<"telegram">): DeliveryTarget {
  const token = settings.token ?? "";
  const api = platformClient("telegram", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    secrets: [token],
  });

  // The token is part of the path; httpCall never puts URLs into errors, and scrubs the token from platform text.
  async function call(method: string, json: unknown, signal?: AbortSignal) {
    const answer = await api.call(method, "POST", `/bot${token}/${method}`, { json, signal });
    const body = answer.body as { ok?: boolean; description?: string; result?: unknown } | undefined;
    if (body?.ok !== true) throw refused("telegram", method, body?.description ?? answer.text, [token]);
    return body.result;
  }

  return chatTarget({
    name: "telegram",
    limit: TELEGRAM_LIMIT,
    homeChannel: settings.home_channel,
    async check(signal) {
      const me = (await call("getMe", {}, signal)) as { username?: string } | undefined;
      return me?.username === undefined ? undefined : `@${me.username}`;
    },
    sendPart({ chatId, text, message, signal }) {
      const thread = threadOf(message);
      const topic = thread === undefined ? {} : { message_thread_id: numericOrString(thread) };
      return call("sendMessage", { chat_id: numericOrString(chatId), text, ...topic }, signal);
    },
  });
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, numericOrString, threadOf } from "./chat.js";
import { platformClient } from "./client.js";
import { refused } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/** Bot API: https://core.telegram.org/bots/api#sendmessage (text 1-4096 characters). */
export const TELEGRAM_LIMIT = 4096;

/**
 * A forum's General topic has thread id 1 (its links end in `/1`), but the Bot API refuses
 * `message_thread_id: 1` with "message thread not found": a message reaches General when it names no topic.
 */
const GENERAL_TOPIC = 1;

/** The `message_thread_id` field for a route's thread id: none for the General topic. */
export function topicField(thread: string | undefined): { message_thread_id?: number | string } {
  if (thread === undefined) return {};
  const id = numericOrString(thread);
  return id === GENERAL_TOPIC ? {} : { message_thread_id: id };
}

/**
 * The supergroup a refused chat moved to: a group upgraded to a supergroup (e.g. when topics are turned
 * on) gets a new id, and the Bot API answers 400 with `parameters.migrate_to_chat_id`.
 */
function migratedTo(err: unknown): string | undefined {
  if (!(err instanceof DeliveryError)) return undefined;
  const id = (err.answer as { parameters?: { migrate_to_chat_id?: unknown } } | undefined)?.parameters
    ?.migrate_to_chat_id;
  return typeof id === "number" && Number.isSafeInteger(id) ? String(id) : undefined;
}

export function telegramTarget(settings: PlatformConfig<"telegram">, deps: TargetDeps): DeliveryTarget {
  /** Chats the Bot API reported as migrated: old id → supergroup id (until the config is updated). */
  const migrated = new Map<string, string>();
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
    async sendPart({ chatId, text, message, signal }) {
      const topic = topicField(threadOf(message));
      const send = (id: string) =>
        call("sendMessage", { chat_id: numericOrString(id), text, ...topic }, signal);
      try {
        return await send(migrated.get(chatId) ?? chatId);
      } catch (err) {
        const to = migratedTo(err);
        if (to === undefined || migrated.get(chatId) === to) throw err;
        migrated.set(chatId, to);
        deps.logger.warn(
          { route: message.route, platform: "telegram" },
          `[delivery] telegram: chat ${chatId} was upgraded to supergroup ${to}; delivering there — set deliver_extra.chat_id or platforms.telegram.home_channel to ${to}`,
        );
        return send(to);
      }
    },
  });
}

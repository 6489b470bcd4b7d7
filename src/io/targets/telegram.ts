import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, numericOrString, rememberGoneThread, threadOf } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf, shownRecipient, THREAD_KEYS } from "./givenRecipient.js";
import { refused } from "./httpJson.js";
import { credentialsNote } from "./refusedRecipient.js";
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

/**
 * The Bot API's answers to a `message_thread_id` naming no topic of the chat: "message thread not found",
 * "TOPIC_DELETED" (a deleted topic), "TOPIC_ID_INVALID". Not "TOPIC_CLOSED": that topic exists, and only
 * its admins may post there.
 */
const TOPIC_GONE = /^Bad Request: (?:message thread not found|TOPIC_DELETED|TOPIC_ID_INVALID)$/i;

function threadNotFound(err: unknown): boolean {
  if (!(err instanceof DeliveryError) || err.transient) return false;
  const description = (err.answer as { description?: unknown } | undefined)?.description;
  return typeof description === "string" && TOPIC_GONE.test(description.trim());
}

/**
 * The Bot API's answers to a chat the bot cannot post to: unknown (a wrong id, or a group the bot never
 * joined), or one it was removed from or blocked by ("Forbidden: bot was kicked from the group chat", "bot
 * is not a member of the channel chat", "bot was blocked by the user", "user is deactivated").
 */
const CHAT_REFUSED = /^(?:Bad Request: chat not found|Forbidden: .*)$/i;

function chatRefused(err: DeliveryError): boolean {
  const description = (err.answer as { description?: unknown } | undefined)?.description;
  return typeof description === "string" && CHAT_REFUSED.test(description.trim());
}

/** The public Bot API, base_url's default. */
const PUBLIC_API = "https://api.telegram.org";

function isPublicApi(baseUrl: string): boolean {
  return baseUrl.replace(/\/+$/, "").toLowerCase() === PUBLIC_API;
}

/** Whether `body` is the Bot API's own refusal with this code: `{"ok": false, "error_code": 404, …}`. */
function botApiAnswer(body: unknown, code: number): boolean {
  const answer = body as { ok?: unknown; error_code?: unknown } | undefined;
  return typeof body === "object" && body !== null && answer?.ok === false && answer.error_code === code;
}

export function telegramTarget(settings: PlatformConfig<"telegram">, deps: TargetDeps): DeliveryTarget {
  /** Chats the Bot API reported as migrated: old id → supergroup id (until the config is updated). */
  const migrated = new Map<string, string>();
  /** `<chat> <topic>` pairs the Bot API did not find: later messages go to the chat without asking again. */
  const missingTopics = new Set<string>();
  const token = settings.token ?? "";
  // A token is `<bot id>:<secret>`: an answer that quotes the secret part alone leaves the key behind too.
  const secrets = [token, token.slice(token.indexOf(":") + 1)];
  const api = platformClient("telegram", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    secrets,
    credentials: "platforms.telegram.token",
    refusalNote: (status, body) => {
      // The Bot API answers a token it cannot parse (`bot123:…`, a part missing) 404 Not Found, a
      // well-formed one it does not know 401: both are the token's fault. Another 404 (a proxy's page, a
      // server at a wrong base_url) is not.
      if (status === 401 || (status === 404 && botApiAnswer(body, 404)))
        return credentialsNote("platforms.telegram.token");
      if (status === 404 && !isPublicApi(settings.base_url))
        return " — not the Bot API's answer: check platforms.telegram.base_url";
      return "";
    },
  });

  // The token is part of the path; httpCall never puts URLs into errors, and scrubs the token from platform text.
  async function call(method: string, json: unknown, signal?: AbortSignal) {
    const answer = await api.call(method, "POST", `/bot${token}/${method}`, { json, signal });
    const body = answer.body as { ok?: boolean; description?: string; result?: unknown } | undefined;
    if (body?.ok !== true) throw refused("telegram", method, body?.description ?? answer.text, secrets);
    return body.result;
  }

  return chatTarget({
    name: "telegram",
    sleep: deps.sleep,
    limit: TELEGRAM_LIMIT,
    ...homeChannelOf(settings),
    chatRefused,
    async check(signal) {
      const me = (await call("getMe", {}, signal)) as { username?: string } | undefined;
      return me?.username === undefined ? undefined : `@${me.username}`;
    },
    async sendPart({ chatId, text, message, signal, home }) {
      const thread = threadOf(message);
      const send = (id: string, topic: string | undefined) =>
        call("sendMessage", { chat_id: numericOrString(id), text, ...topicField(topic) }, signal);
      // A topic the Bot API does not find (deleted, or topics turned off) is left out: the message goes to
      // the chat itself (a forum's General topic) rather than being lost; the operator is told once.
      const toChat = async (id: string) => {
        const topic = thread !== undefined && missingTopics.has(`${id} ${thread}`) ? undefined : thread;
        try {
          return await send(id, topic);
        } catch (err) {
          if (
            topic === undefined ||
            topicField(topic).message_thread_id === undefined ||
            !threadNotFound(err)
          )
            throw err;
          rememberGoneThread(missingTopics, `${id} ${topic}`);
          deps.logger.warn(
            { route: message.route, platform: "telegram" },
            `[delivery] telegram: topic ${shownRecipient(topic, message, THREAD_KEYS)} of chat ${shownRecipient(id, message, ["chat_id"], home)} was not found (deleted, or topics turned off); delivering to the chat itself (its General topic) — fix deliver_extra.message_thread_id (or thread_id) of route "${message.route}"`,
          );
          return send(id, undefined);
        }
      };
      try {
        return await toChat(migrated.get(chatId) ?? chatId);
      } catch (err) {
        const to = migratedTo(err);
        if (to === undefined || migrated.get(chatId) === to) throw err;
        migrated.set(chatId, to);
        deps.logger.warn(
          { route: message.route, platform: "telegram" },
          `[delivery] telegram: chat ${shownRecipient(chatId, message, ["chat_id"], home)} was upgraded to supergroup ${to}; delivering there — set deliver_extra.chat_id or platforms.telegram.home_channel to ${to}`,
        );
        return toChat(to);
      }
    },
    // The sent message names its chat by the numeric id every update of it carries (a chat's session is
    // keyed by it): also for an `@username`, and the supergroup a migrated group's message went to.
    deliveredTo: (chatId, answer) => {
      const id = (answer as { chat?: { id?: unknown } } | undefined)?.chat?.id;
      return typeof id === "number" || (typeof id === "string" && id !== "")
        ? String(id)
        : (migrated.get(chatId) ?? chatId);
    },
  });
}

import { cutText } from "../cutText.js";
import { type HomeChannel, shownRecipient } from "./givenRecipient.js";
import { DeliveryError, type DeliveryMessage } from "./target.js";

/**
 * What a failure adds when the platform refused the credentials (HTTP 401, Slack's `invalid_auth`): the
 * platform's own words ("Unauthorized") do not say which setting to fix.
 */
export const credentialsNote = (keys: string): string =>
  ` — the platform refused the credentials: check ${keys}`;

/**
 * `err` with the chat it refused named, and where its id came from (the route's `deliver_extra.chat_id` or
 * the platform's `home_channel`): "chat not found" or "bot was kicked" does not say which setting to fix.
 * One a `${VAR}` gave is named as config.yaml writes it (`shownRecipient`).
 */
export function namingChat(
  err: unknown,
  platform: string,
  message: DeliveryMessage,
  chatId: string,
  /** The thread the message went to instead, where a thread is a channel of its own (Discord). */
  thread?: string,
  home?: HomeChannel,
): unknown {
  if (!(err instanceof DeliveryError) || err.transient) return err;
  const threadKey =
    thread === undefined
      ? undefined
      : ["message_thread_id", "thread_id"].find((key) => message.extra[key]?.trim() === thread);
  const from =
    message.extra.chat_id === undefined
      ? `platforms.${platform}.home_channel`
      : `deliver_extra.chat_id of route "${message.route}"`;
  // The id may be payload text: a long one is cut, as the platform's own text is.
  const cut = (id: string) => cutText(id, 100);
  const note =
    thread !== undefined && threadKey !== undefined
      ? `check thread ${shownRecipient(thread, message, [threadKey], undefined, cut)}, from deliver_extra.${threadKey} of route "${message.route}"`
      : `check chat ${shownRecipient(chatId, message, ["chat_id"], home, cut)}, from ${from}`;
  return new DeliveryError(`${err.message} — ${note}`, false, err.retryAfterSeconds, err.answer);
}

import { describe, type WrittenAs } from "../../config/describe.js";
import { givenBy } from "../../config/givenValues.js";
import type { DeliveryMessage } from "./target.js";

/** A platform's `home_channel`, and the file's text for it when a `${VAR}` gave it. */
export interface HomeChannel {
  readonly homeChannel: string | undefined;
  readonly homeChannelGiven?: WrittenAs | undefined;
}

/** `settings.home_channel` as a `HomeChannel` (`settings`: a platform's section of the loaded config). */
export const homeChannelOf = (settings: { readonly home_channel?: string | undefined }): HomeChannel => ({
  homeChannel: settings.home_channel,
  homeChannelGiven: givenBy(settings, "home_channel"),
});

/** The `deliver_extra` keys that name a thread (or topic), in the order `threadOf` reads them. */
export const THREAD_KEYS: readonly string[] = ["message_thread_id", "thread_id"];

/**
 * The file's text for recipient `id` (a chat, a thread, an address list) when a `${VAR}` gave it: the
 * route's `deliver_extra.<key>` (the first of `keys` that rendered to `id`), else the platform's home
 * channel when it is `id`. Undefined when neither gave it so, or `id` is another (a supergroup the
 * platform moved the chat to, a value the payload filled in).
 */
export function recipientGiven(
  id: string,
  message: Pick<DeliveryMessage, "extra" | "written">,
  keys: readonly string[],
  home?: HomeChannel,
): WrittenAs | undefined {
  const key = keys.find((name) => message.extra[name]?.trim() === id.trim());
  if (key !== undefined) return givenBy(message.written, key);
  return home !== undefined && home.homeChannel?.trim() === id.trim() ? home.homeChannelGiven : undefined;
}

/**
 * Recipient `id` as a line at delivery names it: as config.yaml writes it when a `${VAR}` gave it
 * (`"${CHAT}" (the value it gives is not shown)`, recipientGiven), never what the variable gave; else
 * `plain(id)` (the id itself by default).
 */
export function shownRecipient(
  id: string,
  message: Pick<DeliveryMessage, "extra" | "written">,
  keys: readonly string[],
  home?: HomeChannel,
  plain: (id: string) => string = (text) => text,
): string {
  const given = recipientGiven(id, message, keys, home);
  return given === undefined ? plain(id) : describe(given);
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, threadOf } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/** REST API v4 `POST /api/v4/posts`; a post's `message` holds up to 16383 characters. */
export const MATTERMOST_LIMIT = 16_383;

/**
 * `@channel`, `@all` and `@here` in a post notify every member of the channel, and Mattermost has no
 * request flag to turn that off. Payload text is untrusted, so a zero-width space goes
 * after such an `@`: Mattermost splits words there, the text reads the same and notifies no one.
 */
export function defuseChannelMentions(text: string): string {
  return text.replace(/(?<![\p{L}\p{N}_@])@(?=(?:channel|all|here)(?![\p{L}\p{N}_@]))/giu, "@\u200B");
}

export function mattermostTarget(settings: PlatformConfig<"mattermost">): DeliveryTarget {
  const api = tokenClient("mattermost", settings);
  return chatTarget({
    name: "mattermost",
    limit: MATTERMOST_LIMIT,
    prepare: defuseChannelMentions,
    markdown: true,
    homeChannel: settings.home_channel,
    check: async (signal) =>
      stringField(await api.call("users/me", "GET", "/api/v4/users/me", { signal }), "username"),
    sendPart({ chatId, text, message, signal }) {
      const rootId = threadOf(message);
      const json = {
        channel_id: chatId,
        message: text,
        ...(rootId === undefined ? {} : { root_id: rootId }),
      };
      return api.call("create post", "POST", "/api/v4/posts", { json, signal });
    },
  });
}

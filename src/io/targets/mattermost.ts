import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat, threadOf } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** REST API v4 `POST /api/v4/posts`; a post's `message` holds up to 16383 characters. */
export const MATTERMOST_LIMIT = 16_383;

export function mattermostTarget(settings: PlatformConfig<"mattermost">): DeliveryTarget {
  const token = settings.token ?? "";
  const base = settings.base_url ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Bearer ${token}` };
  const secrets = [token];
  return {
    name: "mattermost",
    chat: true,
    async check(signal) {
      const url = joinUrl(base, "/api/v4/users/me");
      const answer = await httpCall({ platform: "mattermost", action: "users/me", method: "GET", url, headers, timeoutMs, signal, secrets });
      return (answer.body as { username?: string } | undefined)?.username;
    },
    send(message, signal, options) {
      const rootId = threadOf(message);
      return sendChat(
        {
          platform: "mattermost",
          limit: MATTERMOST_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (channelId, text) =>
            httpCall({
              platform: "mattermost",
              action: "create post",
              method: "POST",
              url: joinUrl(base, "/api/v4/posts"),
              headers,
              json: { channel_id: channelId, message: text, ...(rootId === undefined ? {} : { root_id: rootId }) },
              timeoutMs,
              signal,
              secrets,
            }),
        },
        message,
        options,
      );
    },
  };
}

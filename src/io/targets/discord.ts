import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** https://discord.com/developers/docs/resources/message#create-message (content up to 2000 characters). */
export const DISCORD_LIMIT = 2000;

export function discordTarget(settings: PlatformConfig<"discord">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Bot ${token}` };
  const secrets = [token];
  return {
    name: "discord",
    chat: true,
    async check(signal) {
      const url = joinUrl(settings.base_url, "/api/v10/users/@me");
      const me = await httpCall({ platform: "discord", action: "users/@me", method: "GET", url, headers, timeoutMs, signal, secrets });
      const name = (me.body as { username?: string } | undefined)?.username;
      return name;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "discord",
          limit: DISCORD_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (channelId, content) =>
            httpCall({
              platform: "discord",
              action: "create message",
              method: "POST",
              url: joinUrl(settings.base_url, `/api/v10/channels/${encodeURIComponent(channelId)}/messages`),
              headers,
              json: { content },
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

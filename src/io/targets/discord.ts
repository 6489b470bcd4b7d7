import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/** https://discord.com/developers/docs/resources/message#create-message (content up to 2000 characters). */
export const DISCORD_LIMIT = 2000;

export function discordTarget(settings: PlatformConfig<"discord">): DeliveryTarget {
  const api = tokenClient("discord", settings, "Bot");
  return chatTarget({
    name: "discord",
    limit: DISCORD_LIMIT,
    homeChannel: settings.home_channel,
    check: async (signal) =>
      stringField(await api.call("users/@me", "GET", "/api/v10/users/@me", { signal }), "username"),
    sendPart: ({ chatId, text, signal }) =>
      api.call("create message", "POST", `/api/v10/channels/${encodeURIComponent(chatId)}/messages`, {
        json: { content: text },
        signal,
      }),
  });
}

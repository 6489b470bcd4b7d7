import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, threadOf } from "./chat.js";
import { platformClient, stringField } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/** https://discord.com/developers/docs/resources/message#create-message (content up to 2000 characters). */
export const DISCORD_LIMIT = 2000;

/**
 * https://discord.com/developers/docs/reference#user-agent: HTTP API clients must send
 * `User-Agent: DiscordBot ($url, $versionNumber)`. svc has no project URL, so its name stands in for it.
 */
export const DISCORD_USER_AGENT = "DiscordBot (svc, 0.1.0)";

export function discordTarget(settings: PlatformConfig<"discord">): DeliveryTarget {
  const token = settings.token ?? "";
  const api = platformClient("discord", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Bot ${token}`, "user-agent": DISCORD_USER_AGENT },
    secrets: [token],
  });
  return chatTarget({
    name: "discord",
    limit: DISCORD_LIMIT,
    markdown: true,
    homeChannel: settings.home_channel,
    check: async (signal) =>
      stringField(await api.call("users/@me", "GET", "/api/v10/users/@me", { signal }), "username"),
    // A thread is a channel of its own: messages to it go to /channels/<thread id>/messages.
    sendPart: ({ chatId, text, message, signal }) =>
      api.call(
        "create message",
        "POST",
        `/api/v10/channels/${encodeURIComponent(threadOf(message) ?? chatId)}/messages`,
        // Payload text is untrusted (spec 5 rule 6): mentions in it render but never ping anyone.
        { json: { content: text, allowed_mentions: { parse: [] } }, signal },
      ),
  });
}

import { systemClock } from "../../clock.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { VERSION } from "../version.js";
import { chatTarget, hashedPartKey, threadOf } from "./chat.js";
import { baseUrlOf, platformClient, stringField } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { defuseMaskedLinks } from "./maskedLinks.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";

/** https://discord.com/developers/docs/resources/message#create-message (content up to 2000 characters). */
export const DISCORD_LIMIT = 2000;

/**
 * https://discord.com/developers/docs/reference#user-agent: HTTP API clients must send
 * `User-Agent: DiscordBot ($url, $versionNumber)`. svc has no project URL, so its name stands in for it.
 */
export const DISCORD_USER_AGENT = `DiscordBot (svc, ${VERSION})`;

/**
 * Discord's `nonce` holds up to 25 characters; with `enforce_nonce: true` a second message of the bot with
 * the same nonce within a few minutes is not created (Discord answers with the first one).
 */
const NONCE_LENGTH = 25;

/** Discord's error codes refusing the channel itself (https://discord.com/developers/docs/topics/opcodes-and-status-codes). */
const CHANNEL_REFUSED = new Set([10003, 50001, 50013]);

/** A bucket reset further away than this is not waited for (the request goes out and may draw a 429). */
const MAX_BUCKET_WAIT_MS = 10_000;

export function discordTarget(settings: PlatformConfig<"discord">, deps: TargetDeps): DeliveryTarget {
  const token = settings.token ?? "";
  const api = platformClient("discord", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `Bot ${token}`, "user-agent": DISCORD_USER_AGENT },
    secrets: [token],
    credentials: "platforms.discord.token",
  });
  /**
   * Discord answers each message with its rate-limit bucket (`X-RateLimit-Remaining`,
   * `X-RateLimit-Reset-After` seconds; discord.com/developers/docs/topics/rate-limits). When a channel's
   * bucket is empty, the next part waits for its reset instead of drawing a 429 (which a direct delivery
   * does not retry: the long message would be cut off). Both the reset's time and the wait are on the
   * gateway's clock (`elapsed`, never set, and `sleep`), and the gateway's stop (`waits`) ends the wait.
   */
  const elapsed = deps.elapsed ?? systemClock.elapsed;
  const sleep = deps.sleep ?? systemClock.sleep;
  const resetAt = new Map<string, number>();
  async function waitForBucket(channel: string, signal?: AbortSignal) {
    const until = resetAt.get(channel);
    if (until === undefined) return;
    resetAt.delete(channel);
    const ms = until - elapsed();
    if (ms > 0 && ms <= MAX_BUCKET_WAIT_MS) await sleep(ms, signal);
  }
  function noteBucket(channel: string, headers: Headers) {
    const resetAfter = Number(headers.get("x-ratelimit-reset-after"));
    if (headers.get("x-ratelimit-remaining") === "0" && Number.isFinite(resetAfter) && resetAfter > 0)
      resetAt.set(channel, elapsed() + resetAfter * 1000);
  }

  return chatTarget({
    name: "discord",
    sleep: deps.sleep,
    limit: DISCORD_LIMIT,
    // Payload text is untrusted: a masked link in it (`[Approve](https://evil.example)`) shows as written.
    prepare: (text) => defuseMaskedLinks(text, "discord"),
    // And in each part again: a cut through a long code span leaves the rest of it no code in the next part.
    preparePart: (part) => defuseMaskedLinks(part, "discord"),
    markdown: true,
    ...homeChannelOf(settings),
    threadIsChannel: true,
    // Unknown Channel (10003), Missing Access (50001: the bot cannot see it), Missing Permissions (50013).
    chatRefused: (err) => CHANNEL_REFUSED.has((err.answer as { code?: unknown } | undefined)?.code as number),
    check: async (signal) =>
      stringField(await api.call("users/@me", "GET", "/api/v10/users/@me", { signal }), "username"),
    // A thread is a channel of its own: messages to it go to /channels/<thread id>/messages.
    async sendPart({ chatId, text, index, message, signal, waits }) {
      const channel = threadOf(message) ?? chatId;
      await waitForBucket(channel, waits);
      const answer = await api.call(
        "create message",
        "POST",
        `/api/v10/channels/${encodeURIComponent(channel)}/messages`,
        {
          json: {
            content: text,
            // Payload text is untrusted: mentions in it render but never ping anyone.
            allowed_mentions: { parse: [] },
            // The same on every attempt: a part whose answer was lost (a timeout, a 5xx after Discord
            // posted it) is not posted twice when it is sent again.
            nonce: hashedPartKey(message, index, NONCE_LENGTH),
            enforce_nonce: true,
          },
          signal,
        },
      );
      noteBucket(channel, answer.headers);
      return answer;
    },
  });
}

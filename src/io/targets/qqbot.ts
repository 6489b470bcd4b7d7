import { shownValue } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf, shownRecipient } from "./givenRecipient.js";
import { qqMissingId, qqMissingIdText } from "./qqChatId.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";
import { answerCode, appTokens, withFreshToken } from "./tokenCache.js";

/** QQ bot OpenAPI text messages; parts stay within 2000 characters. */
export const QQBOT_LIMIT = 2000;

/**
 * QQ reads a message's content as a text chain: `@everyone` and `<qqbot-at-everyone />` mention every
 * member, `<@id>`, `<@!id>` and `<qqbot-at-user id="…" />` one (bot.q.qq.com/wiki, message text chain),
 * in channel, group and direct messages. Payload text is untrusted: a zero-width space after the `@` of
 * `@everyone` and after the `<` of such a tag leaves them as the text they were, notifying no one.
 */
export function defuseQqMentions(text: string): string {
  return text.replace(/<(?=@|qqbot-)|@(?=everyone)/gi, "$&\u200B");
}

/** QQ's refusal of an access token it no longer accepts: `{"message": "token not exist or expire", "code": 11244}`. */
const staleToken = (err: unknown) => answerCode(err) === 11244;

/**
 * `group:<group_openid>`, `user:<openid>` or `channel:<channel_id>` (a bare id is a guild channel). A kind
 * with no id after it (`group:`, as an unset template renders) is refused (`qqMissingId`), naming the chat
 * id as `shown` says it (quoted; config.yaml's text for one a `${VAR}` gave).
 */
export function qqMessagePath(chatId: string, shown = `"${chatId}"`): { path: string; v2: boolean } {
  const missing = qqMissingId(chatId);
  if (missing !== undefined)
    throw new DeliveryError(
      `qqbot: chat id ${shown} ${qqMissingIdText(missing, "the message is not sent")}`,
      false,
    );
  const [kind, ...rest] = chatId.split(":");
  const raw = rest.join(":");
  const id = encodeURIComponent(raw);
  if (kind === "group" && rest.length > 0) return { path: `/v2/groups/${id}/messages`, v2: true };
  if (kind === "user" && rest.length > 0) return { path: `/v2/users/${id}/messages`, v2: true };
  if (kind === "channel" && rest.length > 0) return { path: `/channels/${id}/messages`, v2: false };
  return { path: `/channels/${encodeURIComponent(chatId)}/messages`, v2: false };
}

export function qqbotTarget(settings: PlatformConfig<"qqbot">, deps: TargetDeps): DeliveryTarget {
  const clientSecret = settings.client_secret ?? "";
  const api = platformClient("qqbot", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    secrets: [clientSecret],
  });
  const tokens = appTokens(
    api,
    {
      platform: "qqbot",
      action: "getAppAccessToken",
      method: "POST",
      path: settings.token_url,
      json: { appId: settings.app_id, clientSecret },
      secret: clientSecret,
      credentials: "platforms.qqbot.app_id and platforms.qqbot.client_secret",
      read: (body) => ({
        token: body.access_token,
        expiresIn: body.expires_in,
        ...(typeof body.message === "string" ? { error: body.message } : {}),
        // 100007 "appid invalid", 100016 "invalid appid or secret": the app's keys; 100001 "Too many requests".
        credentialsRefused: body.code === 100007 || body.code === 100016,
        tryAgain:
          body.code === 100001 ? { why: "QQ's token endpoint asks to call it less often" } : undefined,
      }),
    },
    deps.now,
  );

  return chatTarget({
    name: "qqbot",
    sleep: deps.sleep,
    limit: QQBOT_LIMIT,
    prepare: defuseQqMentions,
    ...homeChannelOf(settings),
    async check(signal) {
      await tokens.get(signal);
      return settings.app_id === undefined ? undefined : shownValue(settings, "app_id", settings.app_id);
    },
    sendPart({ chatId, text, message, signal, home }) {
      const { path, v2 } = qqMessagePath(
        chatId,
        shownRecipient(chatId, message, ["chat_id"], home, (id) => `"${id}"`),
      );
      return withFreshToken(tokens, signal, staleToken, (token) =>
        api.call("send message", "POST", path, {
          json: v2 ? { content: text, msg_type: 0 } : { content: text },
          headers: { authorization: `QQBot ${token}`, "x-union-appid": settings.app_id ?? "" },
          secrets: [token],
          signal,
        }),
      );
    },
  });
}

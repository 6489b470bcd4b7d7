import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { platformClient } from "./client.js";
import { refused } from "./httpJson.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { tokenCache } from "./tokenCache.js";

/** QQ bot OpenAPI text messages; parts stay within 2000 characters. */
export const QQBOT_LIMIT = 2000;

/** `group:<group_openid>`, `user:<openid>` or `channel:<channel_id>` (a bare id is a guild channel). */
export function qqMessagePath(chatId: string): { path: string; v2: boolean } {
  const [kind, ...rest] = chatId.split(":");
  const id = encodeURIComponent(rest.join(":"));
  if (kind === "group" && rest.length > 0) return { path: `/v2/groups/${id}/messages`, v2: true };
  if (kind === "user" && rest.length > 0) return { path: `/v2/users/${id}/messages`, v2: true };
  if (kind === "channel" && rest.length > 0) return { path: `/channels/${id}/messages`, v2: false };
  return { path: `/channels/${encodeURIComponent(chatId)}/messages`, v2: false };
}

export function qqbotTarget(settings: PlatformConfig<"qqbot">, deps: TargetDeps): DeliveryTarget {
  const clientSecret = settings.client_secret ?? "";
  const api = platformClient("qqbot", {
    baseUrl: settings.base_url,
    timeoutSeconds: settings.timeout_seconds,
    secrets: [clientSecret],
  });
  const tokens = tokenCache(async (signal) => {
    const json = { appId: settings.app_id, clientSecret };
    const answer = await api.call("getAppAccessToken", "POST", settings.token_url, { json, signal });
    const body = answer.body as
      | { access_token?: string; expires_in?: string | number; message?: string }
      | undefined;
    if (typeof body?.access_token !== "string")
      throw refused("qqbot", "getAppAccessToken", body?.message ?? answer.text, [clientSecret]);
    return { token: body.access_token, expiresInSeconds: Number(body.expires_in ?? 7200) || 7200 };
  }, deps.now);

  return chatTarget({
    name: "qqbot",
    limit: QQBOT_LIMIT,
    homeChannel: settings.home_channel,
    async check(signal) {
      await tokens.get(signal);
      return settings.app_id;
    },
    async sendPart({ chatId, text, signal }) {
      const token = await tokens.get(signal);
      const { path, v2 } = qqMessagePath(chatId);
      const headers = { authorization: `QQBot ${token}`, "x-union-appid": settings.app_id ?? "" };
      return api.call("send message", "POST", path, {
        json: v2 ? { content: text, msg_type: 0 } : { content: text },
        headers,
        secrets: [token],
        signal,
      });
    },
  });
}

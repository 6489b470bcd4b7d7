import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl, refused } from "./httpJson.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { tokenCache } from "./tokenCache.js";

/**
 * Feishu / Lark IM v1 `POST /open-apis/im/v1/messages?receive_id_type=...` (msg_type `text`) with a
 * tenant_access_token from `/open-apis/auth/v3/tenant_access_token/internal`. Text requests are capped
 * at 150 KB; parts stay within 30000 UTF-8 bytes to leave room for JSON escaping.
 */
export const FEISHU_LIMIT = 30_000;

/** `oc_` chat ids, `ou_` open ids, `on_` union ids and e-mail addresses are all accepted as chat_id. */
export function receiveIdType(id: string): string {
  if (id.startsWith("ou_")) return "open_id";
  if (id.startsWith("on_")) return "union_id";
  if (id.includes("@")) return "email";
  return "chat_id";
}

export function feishuTarget(settings: PlatformConfig<"feishu">, deps: TargetDeps): DeliveryTarget {
  const appSecret = settings.app_secret ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const secrets = [appSecret];
  const tokens = tokenCache(async (signal) => {
    const answer = await httpCall({
      platform: "feishu",
      action: "tenant_access_token",
      method: "POST",
      url: joinUrl(settings.base_url, "/open-apis/auth/v3/tenant_access_token/internal"),
      json: { app_id: settings.app_id, app_secret: appSecret },
      timeoutMs,
      signal,
      secrets,
    });
    const body = answer.body as { code?: number; msg?: string; tenant_access_token?: string; expire?: number } | undefined;
    if (body?.code !== 0 || typeof body.tenant_access_token !== "string") {
      throw refused("feishu", "tenant_access_token", body?.msg ?? answer.text, secrets);
    }
    return { token: body.tenant_access_token, expiresInSeconds: body.expire ?? 7200 };
  }, deps.now);

  return {
    name: "feishu",
    chat: true,
    async check(signal) {
      await tokens.get(signal);
      return settings.app_id;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "feishu",
          limit: FEISHU_LIMIT,
          unit: "utf8",
          homeChannel: settings.home_channel,
          sendPart: async (receiveId, text) => {
            const token = await tokens.get(signal);
            const answer = await httpCall({
              platform: "feishu",
              action: "im/v1/messages",
              method: "POST",
              url: joinUrl(settings.base_url, `/open-apis/im/v1/messages?receive_id_type=${receiveIdType(receiveId)}`),
              headers: { authorization: `Bearer ${token}` },
              json: { receive_id: receiveId, msg_type: "text", content: JSON.stringify({ text }) },
              timeoutMs,
              signal,
              secrets: [...secrets, token],
            });
            const body = answer.body as { code?: number; msg?: string } | undefined;
            if (body?.code !== 0) throw refused("feishu", "im/v1/messages", `${body?.code ?? "?"} ${body?.msg ?? answer.text}`, secrets);
          },
        },
        message,
        options,
      );
    },
  };
}

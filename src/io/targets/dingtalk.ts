import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl, refused } from "./httpJson.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { tokenCache } from "./tokenCache.js";

/**
 * DingTalk app robot, group messages: `POST /v1.0/robot/groupMessages/send` (msgKey `sampleText`)
 * with an app access token from `POST /v1.0/oauth2/accessToken`. Parts stay within 4000 characters.
 */
export const DINGTALK_LIMIT = 4000;

export function dingtalkTarget(settings: PlatformConfig<"dingtalk">, deps: TargetDeps): DeliveryTarget {
  const clientId = settings.client_id ?? "";
  const clientSecret = settings.client_secret ?? "";
  const robotCode = settings.robot_code ?? clientId;
  const timeoutMs = settings.timeout_seconds * 1000;
  const secrets = [clientSecret];
  const tokens = tokenCache(async (signal) => {
    const answer = await httpCall({
      platform: "dingtalk",
      action: "oauth2/accessToken",
      method: "POST",
      url: joinUrl(settings.base_url, "/v1.0/oauth2/accessToken"),
      json: { appKey: clientId, appSecret: clientSecret },
      timeoutMs,
      signal,
      secrets,
    });
    const body = answer.body as { accessToken?: string; expireIn?: number } | undefined;
    if (typeof body?.accessToken !== "string") throw refused("dingtalk", "oauth2/accessToken", answer.text, secrets);
    return { token: body.accessToken, expiresInSeconds: body.expireIn ?? 7200 };
  }, deps.now);

  return {
    name: "dingtalk",
    chat: true,
    async check(signal) {
      await tokens.get(signal);
      return robotCode;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "dingtalk",
          limit: DINGTALK_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: async (openConversationId, content) => {
            const token = await tokens.get(signal);
            return httpCall({
              platform: "dingtalk",
              action: "robot/groupMessages/send",
              method: "POST",
              url: joinUrl(settings.base_url, "/v1.0/robot/groupMessages/send"),
              headers: { "x-acs-dingtalk-access-token": token },
              json: { msgParam: JSON.stringify({ content }), msgKey: "sampleText", openConversationId, robotCode },
              timeoutMs,
              signal,
              secrets: [...secrets, token],
            });
          },
        },
        message,
        options,
      );
    },
  };
}

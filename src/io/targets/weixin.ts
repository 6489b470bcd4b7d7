import type { PlatformConfig } from "../../config/sections/platforms.js";
import { baseUrlOf } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { wechatStyleTarget } from "./wechatApi.js";

/**
 * WeChat Official Account customer-service text message; `chat_id` is the follower's OpenID. Content up to
 * 2048 bytes. Access tokens come from `POST /cgi-bin/stable_token`.
 */
export const WEIXIN_LIMIT = 2048;

export function weixinTarget(settings: PlatformConfig<"weixin">, deps: TargetDeps): DeliveryTarget {
  const secret = settings.app_secret ?? "";
  return wechatStyleTarget(
    {
      platform: "weixin",
      ...baseUrlOf(settings),
      timeoutSeconds: settings.timeout_seconds,
      ...homeChannelOf(settings),
      limit: WEIXIN_LIMIT,
      // The stable token (normal mode): `GET /cgi-bin/token` would void the token the account's other
      // services hold (each fetch replaces the last), and theirs would void ours; stable tokens are kept
      // apart from those and are not replaced by a repeated fetch.
      tokenRequest: {
        method: "POST",
        path: "/cgi-bin/stable_token",
        json: { grant_type: "client_credential", appid: settings.app_id ?? "", secret, force_refresh: false },
      },
      sendPath: "/cgi-bin/message/custom/send",
      secret,
      credentials: "platforms.weixin.app_id and platforms.weixin.app_secret",
      messageBody: (touser, content) => ({ touser, msgtype: "text", text: { content } }),
    },
    deps,
  );
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { wechatStyleTarget } from "./wechatApi.js";

/** WeChat Official Account customer-service text message; `chat_id` is the follower's OpenID. Content up to 2048 bytes. */
export const WEIXIN_LIMIT = 2048;

export function weixinTarget(settings: PlatformConfig<"weixin">, deps: TargetDeps): DeliveryTarget {
  const secret = settings.app_secret ?? "";
  const query = new URLSearchParams({
    grant_type: "client_credential",
    appid: settings.app_id ?? "",
    secret,
  });
  return wechatStyleTarget(
    {
      platform: "weixin",
      baseUrl: settings.base_url,
      timeoutSeconds: settings.timeout_seconds,
      homeChannel: settings.home_channel,
      limit: WEIXIN_LIMIT,
      tokenPath: `/cgi-bin/token?${query}`,
      sendPath: "/cgi-bin/message/custom/send",
      secret,
      messageBody: (touser, content) => ({ touser, msgtype: "text", text: { content } }),
    },
    deps,
  );
}

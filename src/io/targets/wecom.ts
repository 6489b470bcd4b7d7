import type { PlatformConfig } from "../../config/sections/platforms.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { type TryAgain, wechatStyleTarget } from "./wechatApi.js";

/** WeCom app messages: text `content` up to 2048 bytes. `chat_id` is `touser` ("UserID1|UserID2" or "@all"). */
export const WECOM_LIMIT = 2048;

/**
 * WeCom's 45009 "api freq out of limit": the app called the API more often than its per-minute limit
 * allows, and WeCom refuses its calls for a minute; the message was not sent. (Weixin's 45009 is its
 * daily quota, which no wait within a delivery passes: final there.)
 */
const WECOM_TRY_AGAIN: ReadonlyMap<number, TryAgain> = new Map([
  [45009, { why: "the API's call frequency limit: WeCom refuses calls for a minute", afterSeconds: 60 }],
]);

export function wecomTarget(settings: PlatformConfig<"wecom">, deps: TargetDeps): DeliveryTarget {
  const secret = settings.corp_secret ?? "";
  const query = new URLSearchParams({ corpid: settings.corp_id ?? "", corpsecret: secret });
  return wechatStyleTarget(
    {
      platform: "wecom",
      baseUrl: settings.base_url,
      timeoutSeconds: settings.timeout_seconds,
      homeChannel: settings.home_channel,
      limit: WECOM_LIMIT,
      tokenRequest: { method: "GET", path: `/cgi-bin/gettoken?${query}` },
      sendPath: "/cgi-bin/message/send",
      secret,
      tryAgain: WECOM_TRY_AGAIN,
      messageBody: (touser, content) => ({
        touser,
        msgtype: "text",
        agentid: settings.agent_id,
        text: { content },
      }),
    },
    deps,
  );
}

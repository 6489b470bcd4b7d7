import type { PlatformConfig } from "../../config/sections/platforms.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { wechatStyleTarget } from "./wechatApi.js";

/** WeCom app messages: text `content` up to 2048 bytes. `chat_id` is `touser` ("UserID1|UserID2" or "@all"). */
export const WECOM_LIMIT = 2048;

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

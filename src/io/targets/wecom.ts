import type { PlatformConfig } from "../../config/sections/platforms.js";
import { cutText } from "../cutText.js";
import { baseUrlOf } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import type { DeliveryMessage, DeliveryTarget, TargetDeps } from "./target.js";
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

/**
 * Why a `deliver_extra.chat_id` the event filled in is not sent to: WeCom's `touser` sends to every user id
 * joined with `|`, and to everyone for `@all`, so payload text rendered into it (`{user}` as `alice|bob`, or
 * `@all`) would add recipients, as an e-mail recipient list would. The route's own text decides how many ids
 * there are and whether `@all` is one; a chat id the route writes as it is, or the home channel, is not judged.
 */
export function addedRecipients(chatId: string, message: DeliveryMessage): string | undefined {
  const written = message.written?.chat_id;
  if (typeof written !== "string" || message.extra.chat_id === undefined || written.trim() === chatId)
    return undefined;
  const ids = (text: string) => text.split("|").map((id) => id.trim());
  const wrote = ids(written.trim());
  const got = ids(chatId);
  const where = `wecom: route "${message.route}": deliver_extra.chat_id rendered "${cutText(chatId, 100)}"`;
  const fix =
    "not sent — a list of recipients belongs in the route's chat_id itself or platforms.wecom.home_channel";
  const everyone = (list: readonly string[]) => list.some((id) => id.toLowerCase() === "@all");
  if (everyone(got) && !everyone(wrote))
    return `${where}: the event filled in @all, which WeCom sends to everyone; ${fix}`;
  if (got.length > wrote.length)
    return `${where}: the event filled in ${got.length} user ids joined with "|" where the route writes ${wrote.length}; ${fix}`;
  return undefined;
}

export function wecomTarget(settings: PlatformConfig<"wecom">, deps: TargetDeps): DeliveryTarget {
  const secret = settings.corp_secret ?? "";
  const query = new URLSearchParams({ corpid: settings.corp_id ?? "", corpsecret: secret });
  return wechatStyleTarget(
    {
      platform: "wecom",
      ...baseUrlOf(settings),
      timeoutSeconds: settings.timeout_seconds,
      ...homeChannelOf(settings),
      limit: WECOM_LIMIT,
      tokenRequest: { method: "GET", path: `/cgi-bin/gettoken?${query}` },
      sendPath: "/cgi-bin/message/send",
      secret,
      tryAgain: WECOM_TRY_AGAIN,
      credentials: "platforms.wecom.corp_id and platforms.wecom.corp_secret",
      recipientProblem: addedRecipients,
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

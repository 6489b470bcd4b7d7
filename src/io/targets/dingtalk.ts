import { shownValue } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import type { ThrottleRule } from "./httpJson.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { answerCode, appTokens, withFreshToken } from "./tokenCache.js";

/**
 * DingTalk app robot, group messages: `POST /v1.0/robot/groupMessages/send` (msgKey `sampleText`)
 * with an app access token from `POST /v1.0/oauth2/accessToken`. Parts stay within 4000 characters.
 */
export const DINGTALK_LIMIT = 4000;

/** DingTalk's refusal of an access token it no longer accepts: 401 `{"code": "InvalidAuthentication"}`. */
const staleToken = (err: unknown) => answerCode(err) === "InvalidAuthentication";

/**
 * DingTalk's API gateway refuses a call over the app's or the API's QPS quota with HTTP 403 and `code`
 * `Forbidden.AccessDenied.QpsLimitForApi` or `…QpsLimitForAppkeyAndApi`: the request was not processed,
 * so it is a rate limit (retried in agent mode), not a permission refusal.
 */
export const dingtalkThrottle: ThrottleRule = (_status, body) => {
  const code = (body as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code.startsWith("Forbidden.AccessDenied.QpsLimit") ? {} : undefined;
};

export function dingtalkTarget(settings: PlatformConfig<"dingtalk">, deps: TargetDeps): DeliveryTarget {
  const clientId = settings.client_id ?? "";
  const clientSecret = settings.client_secret ?? "";
  const robotCode = settings.robot_code ?? clientId;
  const api = platformClient("dingtalk", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    secrets: [clientSecret],
    throttled: dingtalkThrottle,
  });
  const tokens = appTokens(
    api,
    {
      platform: "dingtalk",
      action: "oauth2/accessToken",
      method: "POST",
      path: "/v1.0/oauth2/accessToken",
      json: { appKey: clientId, appSecret: clientSecret },
      secret: clientSecret,
      read: (body) => ({ token: body.accessToken, expiresIn: body.expireIn }),
    },
    deps.now,
  );

  return chatTarget({
    name: "dingtalk",
    sleep: deps.sleep,
    limit: DINGTALK_LIMIT,
    ...homeChannelOf(settings),
    async check(signal) {
      await tokens.get(signal);
      // A code a `${VAR}` gave is named as config.yaml writes it.
      return settings.robot_code === undefined
        ? shownValue(settings, "client_id", robotCode)
        : shownValue(settings, "robot_code", robotCode);
    },
    sendPart({ chatId, text, signal }) {
      const json = {
        msgParam: JSON.stringify({ content: text }),
        msgKey: "sampleText",
        openConversationId: chatId,
        robotCode,
      };
      return withFreshToken(tokens, signal, staleToken, (token) =>
        api.call("robot/groupMessages/send", "POST", "/v1.0/robot/groupMessages/send", {
          json,
          headers: { "x-acs-dingtalk-access-token": token },
          secrets: [token],
          signal,
        }),
      );
    },
  });
}

import { createHash } from "node:crypto";
import { shownValue } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { parseRetryAfter } from "../retryAfter.js";
import { chatTarget, partKey } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { refused, type ThrottleRule } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";
import { answerCode, appTokens, withFreshToken } from "./tokenCache.js";

/**
 * Feishu / Lark IM v1 `POST /open-apis/im/v1/messages?receive_id_type=...` (msg_type `text`) with a
 * tenant_access_token from `/open-apis/auth/v3/tenant_access_token/internal`. Text requests are capped
 * at 150 KB; parts stay within 30000 UTF-8 bytes to leave room for JSON escaping.
 */
export const FEISHU_LIMIT = 30_000;

/** `oc_` chat ids, `ou_` open ids, `on_` union ids and e-mail addresses are all accepted as chat_id. */
export function receiveIdType(id: string): string {
  // Before the `@` test: `oc_{id}` filled with an address from the payload stays a chat id.
  if (id.startsWith("oc_")) return "chat_id";
  if (id.startsWith("ou_")) return "open_id";
  if (id.startsWith("on_")) return "union_id";
  if (id.includes("@")) return "email";
  return "chat_id";
}

/**
 * Rate-limit codes: 99991400, the API gateway's (open.feishu.cn/document/server-docs/api-call-guide/frequency-control),
 * and 230020, the message API's own limit per chat or user ("This operation triggers the frequency limit":
 * 5 messages a second to one user or group, shared by the group's bots).
 */
const RATE_LIMITED = new Set([99991400, 230020]);

/**
 * Rate limits: HTTP 429, or 400 with one of the rate-limit `code`s, and the seconds to wait in the
 * `x-ogw-ratelimit-reset` header when it is there.
 */
export const feishuThrottle: ThrottleRule = (status, body, headers) => {
  if (status !== 429 && !RATE_LIMITED.has((body as FeishuAnswer | undefined)?.code as number))
    return undefined;
  return { retryAfterSeconds: parseRetryAfter(headers.get("x-ogw-ratelimit-reset")) };
};

/** Feishu's refusal of a tenant (99991663) or app (99991664) access token it no longer accepts. */
const STALE_TOKEN = new Set([99991663, 99991664]);
const staleToken = (err: unknown) => STALE_TOKEN.has(answerCode(err) as number);

/**
 * Feishu text content turns `<at user_id="all"></at>` into an @all (and `<at user_id="ou_…">` into a
 * mention). Payload text is untrusted: a zero-width space after the `<` leaves such a
 * tag as the text it was, notifying no one.
 */
export function defuseAtTags(text: string): string {
  return text.replace(/<(?=at[\s>/])/gi, "<\u200B");
}

/** Feishu's `uuid` holds at most 50 characters: the part's key as a UUID-shaped digest (36). */
export function feishuUuid(key: string): string {
  const hex = createHash("sha256").update(key).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

interface FeishuAnswer {
  code?: number;
  msg?: string;
}

export function feishuTarget(settings: PlatformConfig<"feishu">, deps: TargetDeps): DeliveryTarget {
  const appSecret = settings.app_secret ?? "";
  const api = platformClient("feishu", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    secrets: [appSecret],
    throttled: feishuThrottle,
  });
  const tokens = appTokens(
    api,
    {
      platform: "feishu",
      action: "tenant_access_token",
      method: "POST",
      path: "/open-apis/auth/v3/tenant_access_token/internal",
      json: { app_id: settings.app_id, app_secret: appSecret },
      secret: appSecret,
      credentials: "platforms.feishu.app_id and platforms.feishu.app_secret",
      read: (body) =>
        body.code === 0
          ? { token: body.tenant_access_token, expiresIn: body.expire }
          : // 10014 "app secret invalid" / "app id not exists", 10003 "invalid param" (a malformed app_id).
            {
              // An answer without a code (a proxy's, an API gateway's) is quoted whole instead.
              ...(body.code === undefined ? {} : { error: `${body.code} ${body.msg ?? ""}`.trim() }),
              credentialsRefused: body.code === 10014 || body.code === 10003,
            },
    },
    deps.now,
  );

  return chatTarget({
    name: "feishu",
    sleep: deps.sleep,
    limit: FEISHU_LIMIT,
    prepare: defuseAtTags,
    unit: "utf8",
    ...homeChannelOf(settings),
    async check(signal) {
      await tokens.get(signal);
      return settings.app_id === undefined ? undefined : shownValue(settings, "app_id", settings.app_id);
    },
    sendPart({ chatId, text, index, message, signal }) {
      const path = `/open-apis/im/v1/messages?receive_id_type=${receiveIdType(chatId)}`;
      const json = {
        receive_id: chatId,
        msg_type: "text",
        content: JSON.stringify({ text }),
        // Feishu sends at most one message per uuid within an hour: a part whose answer was lost (a
        // timeout, a 5xx after Feishu sent it) is not sent twice when it is sent again.
        uuid: feishuUuid(partKey(message, index)),
      };
      return withFreshToken(tokens, signal, staleToken, async (token) => {
        const answer = await api.call("im/v1/messages", "POST", path, {
          json,
          headers: { authorization: `Bearer ${token}` },
          secrets: [token],
          signal,
        });
        const body = answer.body as FeishuAnswer | undefined;
        if (body?.code !== 0) {
          const error = refused(
            "feishu",
            "im/v1/messages",
            `${body?.code ?? "?"} ${body?.msg ?? answer.text}`,
            [appSecret, token],
            body,
          );
          // A rate limit answered with HTTP 200 is still a rate limit.
          const throttle = feishuThrottle(answer.status, body, answer.headers);
          if (throttle === undefined) throw error;
          throw new DeliveryError(error.message, true, throttle.retryAfterSeconds, body);
        }
        return body;
      });
    },
    // Feishu answers with the chat the message is in (`data.chat_id`; for a message to a user's open_id,
    // union_id or email, the p2p chat's `oc_…` id), which a chat's session is keyed by.
    deliveredTo: (chatId, answer) => {
      const chat = (answer as { data?: { chat_id?: unknown } } | undefined)?.data?.chat_id;
      return typeof chat === "string" && chat !== "" ? chat : chatId;
    },
  });
}

import { sendChat } from "./chat.js";
import { httpCall, joinUrl, refused } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";
import { tokenCache } from "./tokenCache.js";

/** errcodes meaning "the access_token expired or is invalid": fetch a new one and retry. */
const STALE_TOKEN = new Set([40001, 40014, 42001]);

export interface WechatStyleSpec {
  readonly platform: "wecom" | "weixin";
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly homeChannel: string | undefined;
  /** Both APIs cap text content at 2048 bytes. */
  readonly limit: number;
  /** `gettoken` path with its query (holds the app secret). */
  readonly tokenPath: string;
  /** Message API path, without `?access_token=`. */
  readonly sendPath: string;
  readonly secret: string;
  messageBody(to: string, content: string): unknown;
}

interface Errcode {
  errcode?: number;
  errmsg?: string;
}

/**
 * WeCom (`/cgi-bin/gettoken` + `/cgi-bin/message/send`) and WeChat Official Accounts
 * (`/cgi-bin/token` + `/cgi-bin/message/custom/send`) share one shape: a cached access_token in
 * the query string and `errcode`/`errmsg` in every answer.
 */
export function wechatStyleTarget(spec: WechatStyleSpec, deps: TargetDeps): DeliveryTarget {
  const { platform, timeoutMs } = spec;
  const tokens = tokenCache(async (signal) => {
    const url = joinUrl(spec.baseUrl, spec.tokenPath);
    const answer = await httpCall({ platform, action: "access_token", method: "GET", url, timeoutMs, signal, secrets: [spec.secret] });
    const body = answer.body as (Errcode & { access_token?: string; expires_in?: number }) | undefined;
    if (typeof body?.access_token !== "string" || (body.errcode ?? 0) !== 0) {
      throw refused(platform, "access_token", `${body?.errcode ?? "?"} ${body?.errmsg ?? answer.text}`, [spec.secret]);
    }
    return { token: body.access_token, expiresInSeconds: body.expires_in ?? 7200 };
  }, deps.now);

  return {
    name: platform,
    chat: true,
    async check(signal) {
      await tokens.get(signal);
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform,
          limit: spec.limit,
          unit: "utf8",
          homeChannel: spec.homeChannel,
          sendPart: async (to, content) => {
            const token = await tokens.get(signal);
            const secrets = [spec.secret, token];
            const url = joinUrl(spec.baseUrl, `${spec.sendPath}?access_token=${encodeURIComponent(token)}`);
            const json = spec.messageBody(to, content);
            const answer = await httpCall({ platform, action: "send message", method: "POST", url, json, timeoutMs, signal, secrets });
            const body = answer.body as Errcode | undefined;
            const code = body?.errcode ?? 0;
            if (code === 0) return;
            if (STALE_TOKEN.has(code)) {
              tokens.invalidate();
              throw new DeliveryError(`${platform}: send message: access token expired (${code})`, true);
            }
            throw refused(platform, "send message", `${code} ${body?.errmsg ?? ""}`.trim(), secrets);
          },
        },
        message,
        options,
      );
    },
  };
}

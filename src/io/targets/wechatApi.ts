import type { WrittenAs } from "../../config/describe.js";
import { describe } from "../../config/describe.js";
import { scrub } from "../credentials.js";
import { cutText } from "../cutText.js";
import { chatTarget } from "./chat.js";
import { platformClient } from "./client.js";
import { type HomeChannel, recipientGiven } from "./givenRecipient.js";
import { refused } from "./httpJson.js";
import { DeliveryError, type DeliveryMessage, type DeliveryTarget, type TargetDeps } from "./target.js";
import { appTokens } from "./tokenCache.js";

/** errcodes meaning "the access_token expired or is invalid": fetch a new one and retry. */
const STALE_TOKEN = new Set([40001, 40014, 42001]);
/**
 * errcodes meaning "try again later": -1 "system busy" in both APIs' global error-code tables, WeCom's
 * 45033 "api concurrent out of limit" (too many calls of one API at once, as several chats delivered to
 * at the same moment make), and Weixin's 45011 "api minute-quota reach limit mustslower retry next
 * minute", which only a wait into the next minute passes.
 */
const TRY_AGAIN: ReadonlyMap<number, TryAgain> = new Map([
  [-1, { why: "system busy" }],
  [45033, { why: "too many concurrent calls" }],
  [45011, { why: "the API's per-minute quota is used up", afterSeconds: 60 }],
]);

/**
 * errcodes of the token endpoints refusing the app's credentials: an invalid secret (40001; Weixin also
 * 40125) or corp / app id (40013), a WeCom secret no longer valid (40091), or a missing one (41002, 41004).
 */
const CREDENTIALS_REFUSED = new Set([40001, 40013, 40091, 40125, 41002, 41004]);

/** Why an errcode is worth another attempt, and how long to wait first (else the usual backoff). */
export interface TryAgain {
  readonly why: string;
  readonly afterSeconds?: number;
}

export interface WechatStyleSpec extends HomeChannel {
  readonly platform: "wecom" | "weixin";
  readonly baseUrl: string;
  /** config.yaml's text for `baseUrl` when a `${VAR}` gave it (`baseUrlOf`). */
  readonly baseUrlGiven: WrittenAs | undefined;
  readonly timeoutSeconds: number;
  /** Both APIs cap text content at 2048 bytes. */
  readonly limit: number;
  /** How an access token is fetched: WeCom `GET /cgi-bin/gettoken?…` (the secret in the query), Weixin `POST /cgi-bin/stable_token`. */
  readonly tokenRequest: { readonly method: "GET" | "POST"; readonly path: string; readonly json?: unknown };
  /** Message API path, without `?access_token=`. */
  readonly sendPath: string;
  readonly secret: string;
  /** The config keys of the app's credentials (`platforms.wecom.corp_id and platforms.wecom.corp_secret`). */
  readonly credentials: string;
  /** The platform's own errcodes worth another attempt, besides the shared ones. */
  readonly tryAgain?: ReadonlyMap<number, TryAgain>;
  messageBody(to: string, content: string): unknown;
  /** Why the message is not sent to `chatId` (one the event filled in), or undefined: checked before anything is sent. */
  recipientProblem?(chatId: string, message: DeliveryMessage): string | undefined;
}

interface Errcode {
  errcode?: number;
  errmsg?: string;
}

/**
 * WeCom sends to the recipients it can and answers `errcode` 0 with the ones it could not in these fields
 * (outside the app's visible range, unknown, or without a licence); only when none is reachable does it
 * fail (81013). `"<field> <ids>"` for each non-empty one.
 */
export function unreachedRecipients(body: unknown): string[] {
  const fields = ["invaliduser", "invalidparty", "invalidtag", "unlicenseduser"] as const;
  const answer = body as Partial<Record<(typeof fields)[number], unknown>> | undefined;
  return fields.flatMap((field) => {
    const ids = answer?.[field];
    return typeof ids === "string" && ids.trim() !== "" ? [`${field} ${cutText(ids.trim(), 200)}`] : [];
  });
}

const errmsg = (body: unknown): string => (body as Errcode | undefined)?.errmsg ?? "";

/**
 * WeCom app text messages and Weixin customer-service text messages render an `<a href="…">text</a>` in
 * `content` as a link showing only its text (Weixin also opens a mini program from
 * `<a data-miniprogram-appid=…>`). Payload text is untrusted and must arrive as written: a zero-width
 * space after the `<` of such a tag leaves it as the text it was, with no hidden link target.
 */
export function defuseLinkTags(text: string): string {
  return text.replace(/<(?=a[\s>/])/gi, "<\u200B");
}

/**
 * WeCom (`/cgi-bin/gettoken` + `/cgi-bin/message/send`) and WeChat Official Accounts
 * (`/cgi-bin/stable_token` + `/cgi-bin/message/custom/send`) share one shape: a cached access_token in
 * the query string and `errcode`/`errmsg` in every answer.
 */
export function wechatStyleTarget(spec: WechatStyleSpec, deps: TargetDeps): DeliveryTarget {
  const { platform } = spec;
  /** The token endpoint and the message API answer "system busy" and the per-minute limits alike. */
  const tryAgainFor = (code: number) => TRY_AGAIN.get(code) ?? spec.tryAgain?.get(code);
  const api = platformClient(platform, {
    baseUrl: spec.baseUrl,
    baseUrlGiven: spec.baseUrlGiven,
    timeoutSeconds: spec.timeoutSeconds,
    secrets: [spec.secret],
  });
  const tokens = appTokens(
    api,
    {
      platform,
      action: "access_token",
      method: spec.tokenRequest.method,
      path: spec.tokenRequest.path,
      ...(spec.tokenRequest.json === undefined ? {} : { json: spec.tokenRequest.json }),
      secret: spec.secret,
      credentials: spec.credentials,
      read: (body) =>
        (body.errcode ?? 0) === 0
          ? { token: body.access_token, expiresIn: body.expires_in }
          : {
              error: `${body.errcode} ${body.errmsg ?? ""}`.trim(),
              tryAgain: typeof body.errcode === "number" ? tryAgainFor(body.errcode) : undefined,
              credentialsRefused: typeof body.errcode === "number" && CREDENTIALS_REFUSED.has(body.errcode),
            },
    },
    deps.now,
  );

  return chatTarget({
    name: platform,
    sleep: deps.sleep,
    limit: spec.limit,
    unit: "utf8",
    prepare: defuseLinkTags,
    homeChannel: spec.homeChannel,
    homeChannelGiven: spec.homeChannelGiven,
    async check(signal) {
      await tokens.get(signal);
    },
    async sendPart({ chatId, text, index, message, signal, home }) {
      const problem = index === 0 ? spec.recipientProblem?.(chatId, message) : undefined;
      if (problem !== undefined) throw new DeliveryError(problem, false);
      // An access token can expire early (another process fetched a new one): fetch again once, in any mode.
      for (let attempt = 0; ; attempt++) {
        const token = await tokens.get(signal);
        const path = `${spec.sendPath}?access_token=${encodeURIComponent(token)}`;
        const answer = await api.call("send message", "POST", path, {
          json: spec.messageBody(chatId, text),
          secrets: [token],
          signal,
        });
        const code = (answer.body as Errcode | undefined)?.errcode;
        if (code === 0) {
          const unreached = unreachedRecipients(answer.body);
          // Said once per delivery (its first part), not once per part of a long text.
          if (unreached.length > 0 && index === 0) {
            // A list a `${VAR}` gave is named as the file writes it, and so are its members: by their count.
            const given = recipientGiven(chatId, message, ["chat_id"], home);
            const who = given === undefined ? unreached.join(", ") : `${unreached.length} of its recipients`;
            deps.logger.warn(
              { route: message.route, platform },
              `[delivery] ${platform}: route "${message.route}": not delivered to ${who} (unknown, outside the app's visible range, or unlicensed) — the other recipients of ${given === undefined ? `"${chatId}"` : describe(given)} got it`,
            );
          }
          return;
        }
        // Every answer of the message API carries an errcode; JSON without one is not the platform's.
        if (typeof code !== "number")
          throw refused(
            platform,
            "send message",
            // Scrubbed before it is cut: a cut through an echoed token would leave its beginning.
            `the answer has no errcode (${cutText(scrub(answer.text, [spec.secret, token]), 80)}), so it is not the ${platform} API's — check base_url`,
            [spec.secret, token],
          );
        const tryAgain = tryAgainFor(code);
        if (tryAgain !== undefined) {
          throw new DeliveryError(
            `${platform}: send message: ${code} ${errmsg(answer.body)} (${tryAgain.why})`,
            true,
            tryAgain.afterSeconds,
          );
        }
        if (!STALE_TOKEN.has(code)) {
          throw refused(platform, "send message", `${code} ${errmsg(answer.body)}`.trim(), [
            spec.secret,
            token,
          ]);
        }
        tokens.invalidate();
        if (attempt > 0)
          throw new DeliveryError(
            `${platform}: send message: access token rejected (${code}) right after it was issued`,
            true,
          );
      }
    },
  });
}

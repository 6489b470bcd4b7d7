import type { PlatformConfig } from "../../config/sections/platforms.js";
import { parseRetryAfter } from "../retryAfter.js";
import { chatTarget, threadOf } from "./chat.js";
import { tokenClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { refused } from "./httpJson.js";
import { credentialsNote } from "./refusedRecipient.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/** https://api.slack.com/methods/chat.postMessage — `text` is truncated past 40,000 characters. */
export const SLACK_LIMIT = 40_000;

/**
 * `ok: false` error codes of the Web API that mean "try again later" (api.slack.com/methods/chat.postMessage
 * "Errors"): a rate limit, Slack's own transient failures, `request_timeout` (the POST data arrived
 * missing or truncated: nothing was posted) and `team_added_to_org` (the workspace is moving into an
 * Enterprise organization, and the Web API is intermittently unavailable until that is done).
 */
const TRANSIENT_ERRORS = new Set([
  "ratelimited",
  "service_unavailable",
  "internal_error",
  "request_timeout",
  "team_added_to_org",
]);

/**
 * Slack reads `<!channel>`, `<@U…>` and `<url|text>` in `text` as mentions and links; payload text is
 * untrusted, so `&`, `<`, `>` are escaped as Slack's formatting guide asks.
 */
export function escapeSlackText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Size of one character once escaped (`&amp;` 5, `&lt;`/`&gt;` 4), without building the escaped text. */
function escapedSize(ch: string): number {
  if (ch === "&") return 5;
  return ch === "<" || ch === ">" ? 4 : ch.length;
}

/** `ok: false` codes refusing the token itself (revoked, expired, the app uninstalled, the account gone). */
const CREDENTIAL_ERRORS = new Set([
  "invalid_auth",
  "not_authed",
  "token_revoked",
  "token_expired",
  "account_inactive",
]);

/** `ok: false` codes refusing the channel: unknown, the bot not in it, or archived. */
const CHANNEL_ERRORS = new Set(["channel_not_found", "not_in_channel", "is_archived"]);

export function slackTarget(settings: PlatformConfig<"slack">, deps: TargetDeps): DeliveryTarget {
  const token = settings.token ?? "";
  const api = tokenClient("slack", settings);

  // Slack answers HTTP 200 with `ok: false` and an `error` code for refusals.
  async function call(method: string, json: unknown, signal?: AbortSignal) {
    const answer = await api.call(method, "POST", `/api/${method}`, { json, signal });
    const body = answer.body as { ok?: boolean; error?: string; user?: string; team?: string } | undefined;
    if (body?.ok !== true) {
      const code = body?.error;
      const error = refused("slack", method, code ?? answer.text, [token], body);
      if (code !== undefined && CREDENTIAL_ERRORS.has(code))
        throw new DeliveryError(`${error.message}${credentialsNote("platforms.slack.token")}`, false);
      if (code === undefined || !TRANSIENT_ERRORS.has(code)) throw error;
      throw new DeliveryError(error.message, true, parseRetryAfter(answer.headers.get("retry-after")));
    }
    return body;
  }

  return chatTarget({
    name: "slack",
    sleep: deps.sleep,
    limit: SLACK_LIMIT,
    markdown: true,
    // The limit applies to the escaped text Slack receives: `<` counts as the 4 characters of `&lt;`.
    unit: escapedSize,
    ...homeChannelOf(settings),
    chatRefused: (err) => CHANNEL_ERRORS.has(String((err.answer as { error?: unknown } | undefined)?.error)),
    async check(signal) {
      const me = await call("auth.test", {}, signal);
      return me.user === undefined ? undefined : `${me.user}${me.team === undefined ? "" : ` (${me.team})`}`;
    },
    sendPart({ chatId, text, message, signal }) {
      const thread = threadOf(message, ["thread_ts", "message_thread_id", "thread_id"]);
      return call(
        "chat.postMessage",
        {
          channel: chatId,
          text: escapeSlackText(text),
          ...(thread === undefined ? {} : { thread_ts: thread }),
        },
        signal,
      );
    },
    // Slack answers with the channel's ID (a `#name` or a user's ID names it otherwise): a chat's session is
    // keyed by the ID its events carry.
    deliveredTo: (chatId, answer) => {
      const channel = (answer as { channel?: unknown } | undefined)?.channel;
      return typeof channel === "string" && channel !== "" ? channel : chatId;
    },
  });
}

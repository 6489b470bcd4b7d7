import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat, threadOf } from "./chat.js";
import { httpCall, joinUrl, refused } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/** https://api.slack.com/methods/chat.postMessage — `text` is truncated past 40,000 characters. */
export const SLACK_LIMIT = 40_000;

export function slackTarget(settings: PlatformConfig<"slack">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const secrets = [token];

  // Slack answers HTTP 200 with `ok: false` and an `error` code for refusals.
  async function call(method: string, json: unknown, signal?: AbortSignal) {
    const answer = await httpCall({
      platform: "slack",
      action: method,
      method: "POST",
      url: joinUrl(settings.base_url, `/api/${method}`),
      headers: { authorization: `Bearer ${token}` },
      json,
      timeoutMs,
      signal,
      secrets,
    });
    const body = answer.body as { ok?: boolean; error?: string; user?: string; team?: string } | undefined;
    if (body?.ok !== true) throw refused("slack", method, body?.error ?? answer.text, secrets);
    return body;
  }

  return {
    name: "slack",
    chat: true,
    async check(signal) {
      const me = await call("auth.test", {}, signal);
      return me.user === undefined ? undefined : `${me.user}${me.team === undefined ? "" : ` (${me.team})`}`;
    },
    send(message, signal, options) {
      const thread = message.extra.thread_ts?.trim() || threadOf(message);
      return sendChat(
        {
          platform: "slack",
          limit: SLACK_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (channel, text) =>
            call("chat.postMessage", { channel, text, ...(thread === undefined ? {} : { thread_ts: thread }) }, signal),
        },
        message,
        options,
      );
    },
  };
}

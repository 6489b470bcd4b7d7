import { randomUUID } from "node:crypto";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/**
 * BlueBubbles server REST API: `POST /api/v1/message/text?password=...` with a `chatGuid`
 * (e.g. `iMessage;-;+15555550123`). No documented size limit; parts stay within 10000 characters.
 */
export const BLUEBUBBLES_LIMIT = 10_000;

export function bluebubblesTarget(settings: PlatformConfig<"bluebubbles">): DeliveryTarget {
  const password = settings.password ?? "";
  const base = settings.base_url ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const secrets = [password];
  // The password travels in the query string: these URLs never reach a log line.
  const url = (path: string) => joinUrl(base, `${path}?password=${encodeURIComponent(password)}`);
  return {
    name: "bluebubbles",
    chat: true,
    async check(signal) {
      await httpCall({ platform: "bluebubbles", action: "ping", method: "GET", url: url("/api/v1/ping"), timeoutMs, signal, secrets });
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "bluebubbles",
          limit: BLUEBUBBLES_LIMIT,
          homeChannel: settings.home_channel,
          sendPart: (chatGuid, text) =>
            httpCall({
              platform: "bluebubbles",
              action: "message/text",
              method: "POST",
              url: url("/api/v1/message/text"),
              json: { chatGuid, tempGuid: randomUUID(), message: text, method: settings.method },
              timeoutMs,
              signal,
              secrets,
            }),
        },
        message,
        options,
      );
    },
  };
}

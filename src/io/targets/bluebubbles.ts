import { randomUUID } from "node:crypto";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { platformClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/**
 * BlueBubbles server REST API: `POST /api/v1/message/text?password=...` with a `chatGuid`
 * (e.g. `iMessage;-;+15555550123`). No documented size limit; parts stay within 10000 characters.
 */
export const BLUEBUBBLES_LIMIT = 10_000;

export function bluebubblesTarget(settings: PlatformConfig<"bluebubbles">): DeliveryTarget {
  const password = settings.password ?? "";
  const api = platformClient("bluebubbles", {
    baseUrl: settings.base_url ?? "",
    timeoutSeconds: settings.timeout_seconds,
    secrets: [password],
  });
  // The password travels in the query string; request URLs never reach a log line or an error.
  const withPassword = (path: string) => `${path}?password=${encodeURIComponent(password)}`;
  return chatTarget({
    name: "bluebubbles",
    limit: BLUEBUBBLES_LIMIT,
    homeChannel: settings.home_channel,
    async check(signal) {
      await api.call("ping", "GET", withPassword("/api/v1/ping"), { signal });
    },
    sendPart: ({ chatId, text, signal }) =>
      api.call("message/text", "POST", withPassword("/api/v1/message/text"), {
        json: { chatGuid: chatId, tempGuid: randomUUID(), message: text, method: settings.method },
        signal,
      }),
  });
}

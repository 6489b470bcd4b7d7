import { randomUUID } from "node:crypto";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/**
 * BlueBubbles server REST API: `POST /api/v1/message/text?password=...` with a `chatGuid`
 * (e.g. `iMessage;-;+15555550123`). No documented size limit; parts stay within 10000 characters.
 */
export const BLUEBUBBLES_LIMIT = 10_000;

/**
 * BlueBubbles answers a message iMessage refused with HTTP 500 `{"message": "Message Send Error", "error":
 * {"type": "iMessage Error", "message": "Failed to send message! See attached message error code."},
 * "data": {<the message>, "error": <code>}}`: the code that says why is only in `data.error`, so it is
 * added to the failure (`(iMessage error 22)`), which would otherwise point at a code it does not show.
 */
export function withIMessageErrorCode(err: unknown): unknown {
  if (!(err instanceof DeliveryError)) return err;
  const code = (err.answer as { data?: { error?: unknown } } | undefined)?.data?.error;
  if (typeof code !== "number" || code === 0) return err;
  return new DeliveryError(
    `${err.message} (iMessage error ${code})`,
    err.transient,
    err.retryAfterSeconds,
    err.answer,
  );
}

export function bluebubblesTarget(settings: PlatformConfig<"bluebubbles">, deps: TargetDeps): DeliveryTarget {
  const password = settings.password ?? "";
  const api = platformClient("bluebubbles", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    secrets: [password],
    credentials: "platforms.bluebubbles.password",
  });
  // The password travels in the query string; request URLs never reach a log line or an error.
  const withPassword = (path: string) => `${path}?password=${encodeURIComponent(password)}`;
  return chatTarget({
    name: "bluebubbles",
    sleep: deps.sleep,
    limit: BLUEBUBBLES_LIMIT,
    ...homeChannelOf(settings),
    async check(signal) {
      await api.call("ping", "GET", withPassword("/api/v1/ping"), { signal });
    },
    sendPart: ({ chatId, text, signal }) =>
      api
        .call("message/text", "POST", withPassword("/api/v1/message/text"), {
          json: { chatGuid: chatId, tempGuid: randomUUID(), message: text, method: settings.method },
          signal,
        })
        .catch((err: unknown) => {
          throw withIMessageErrorCode(err);
        }),
  });
}

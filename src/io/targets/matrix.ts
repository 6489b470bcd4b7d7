import type { PlatformConfig } from "../../config/sections/platforms.js";
import { sendChat } from "./chat.js";
import { httpCall, joinUrl } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/**
 * Client-server API `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.
 * Events are capped at 65536 bytes including the envelope, so bodies stay within 32000 UTF-8 bytes.
 */
export const MATRIX_LIMIT = 32_000;

export function matrixTarget(settings: PlatformConfig<"matrix">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Bearer ${token}` };
  const secrets = [token];
  return {
    name: "matrix",
    chat: true,
    async check(signal) {
      const url = joinUrl(settings.base_url, "/_matrix/client/v3/account/whoami");
      const answer = await httpCall({ platform: "matrix", action: "whoami", method: "GET", url, headers, timeoutMs, signal, secrets });
      return (answer.body as { user_id?: string } | undefined)?.user_id;
    },
    send(message, signal, options) {
      return sendChat(
        {
          platform: "matrix",
          limit: MATRIX_LIMIT,
          unit: "utf8",
          homeChannel: settings.home_channel,
          // A transaction id derived from the delivery makes a retried PUT idempotent on the homeserver.
          sendPart: (roomId, body, index) => {
            const txn = encodeURIComponent(`svc-${message.deliveryId}-${index}`);
            return httpCall({
              platform: "matrix",
              action: "send m.room.message",
              method: "PUT",
              url: joinUrl(settings.base_url, `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`),
              headers,
              json: { msgtype: "m.text", body },
              timeoutMs,
              signal,
              secrets,
            });
          },
        },
        message,
        options,
      );
    },
  };
}

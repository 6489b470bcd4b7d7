import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import type { DeliveryTarget } from "./target.js";

/**
 * Client-server API `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.
 * Events are capped at 65536 bytes including the envelope, so bodies stay within 32000 UTF-8 bytes.
 */
export const MATRIX_LIMIT = 32_000;

export function matrixTarget(settings: PlatformConfig<"matrix">): DeliveryTarget {
  const api = tokenClient("matrix", settings);
  return chatTarget({
    name: "matrix",
    limit: MATRIX_LIMIT,
    unit: "utf8",
    homeChannel: settings.home_channel,
    check: async (signal) =>
      stringField(
        await api.call("whoami", "GET", "/_matrix/client/v3/account/whoami", { signal }),
        "user_id",
      ),
    // A transaction id derived from the delivery makes a retried PUT idempotent on the homeserver.
    sendPart({ chatId, text, index, message, signal }) {
      const txn = encodeURIComponent(`svc-${message.deliveryId}-${index}`);
      const path = `/_matrix/client/v3/rooms/${encodeURIComponent(chatId)}/send/m.room.message/${txn}`;
      return api.call("send m.room.message", "PUT", path, {
        json: { msgtype: "m.text", body: text },
        signal,
      });
    },
  });
}

import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, partKey, threadOf } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import { refused } from "./httpJson.js";
import type { DeliveryTarget } from "./target.js";

/**
 * Client-server API `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.
 * Events are capped at 65536 bytes including the envelope, so bodies stay within 32000 UTF-8 bytes.
 */
export const MATRIX_LIMIT = 32_000;

/**
 * The client-server API's refusals of the room itself: M_FORBIDDEN (the bot is not in the room, or may not
 * post there) and M_NOT_FOUND (a room alias the directory does not know).
 */
const ROOM_REFUSED = new Set(["M_FORBIDDEN", "M_NOT_FOUND"]);

export function matrixTarget(settings: PlatformConfig<"matrix">): DeliveryTarget {
  const api = tokenClient("matrix", settings);
  const roomIds = new Map<string, string>();

  /** The send endpoint takes a room ID: a `#alias:server` is resolved through the room directory first. */
  async function roomId(chatId: string, signal?: AbortSignal): Promise<string> {
    if (!chatId.startsWith("#")) return chatId;
    const known = roomIds.get(chatId);
    if (known !== undefined) return known;
    const path = `/_matrix/client/v3/directory/room/${encodeURIComponent(chatId)}`;
    const answer = await api.call("resolve room alias", "GET", path, { signal });
    const id = stringField(answer, "room_id");
    if (id === undefined) throw refused("matrix", "resolve room alias", `no room_id for ${chatId}`);
    roomIds.set(chatId, id);
    return id;
  }

  return chatTarget({
    name: "matrix",
    limit: MATRIX_LIMIT,
    unit: "utf8",
    homeChannel: settings.home_channel,
    chatRefused: (err) =>
      ROOM_REFUSED.has((err.answer as { errcode?: unknown } | undefined)?.errcode as string),
    check: async (signal) =>
      stringField(
        await api.call("whoami", "GET", "/_matrix/client/v3/account/whoami", { signal }),
        "user_id",
      ),
    // A transaction id derived from the delivery makes a retried PUT idempotent on the homeserver. Delivery
    // ids are unique per route only (idempotency is per route), so the route is part of it.
    async sendPart({ chatId, text, index, message, signal }) {
      const room = await roomId(chatId, signal);
      const txn = encodeURIComponent(partKey(message, index));
      const path = `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/${txn}`;
      // deliver_extra.thread_id: the thread root's event id (spec v1.4 threads, `rel_type: m.thread`).
      const thread = threadOf(message);
      const relation =
        thread === undefined ? {} : { "m.relates_to": { rel_type: "m.thread", event_id: thread } };
      return api.call("send m.room.message", "PUT", path, {
        // An empty m.mentions turns off the body-based push rules (@room, names): payload text is untrusted.
        json: { msgtype: "m.text", body: text, "m.mentions": {}, ...relation },
        signal,
      });
    },
    // A chat's session is keyed by the room ID its events carry, not by an alias naming it.
    deliveredTo: (chatId) => roomIds.get(chatId) ?? chatId,
  });
}

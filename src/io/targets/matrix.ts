import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, partKey, threadOf } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { refused } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

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

const roomRefused = (err: unknown): boolean =>
  err instanceof DeliveryError &&
  ROOM_REFUSED.has((err.answer as { errcode?: unknown } | undefined)?.errcode as string);

/** Room IDs kept by alias; past this many they are forgotten and asked again (aliases may be templates). */
const ALIASES_KEPT = 256;

export function matrixTarget(settings: PlatformConfig<"matrix">, deps: TargetDeps): DeliveryTarget {
  const api = tokenClient("matrix", settings);
  const roomIds = new Map<string, string>();

  /** The send endpoint takes a room ID: a `#alias:server` is resolved through the room directory first. */
  async function resolve(alias: string, signal?: AbortSignal): Promise<string> {
    const path = `/_matrix/client/v3/directory/room/${encodeURIComponent(alias)}`;
    const answer = await api.call("resolve room alias", "GET", path, { signal });
    const id = stringField(answer, "room_id");
    if (id === undefined) throw refused("matrix", "resolve room alias", `no room_id for ${alias}`);
    if (roomIds.size >= ALIASES_KEPT) roomIds.clear();
    roomIds.set(alias, id);
    return id;
  }

  function send(room: string, txn: string, json: Record<string, unknown>, signal?: AbortSignal) {
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/${txn}`;
    return api.call("send m.room.message", "PUT", path, { json, signal });
  }

  return chatTarget({
    name: "matrix",
    sleep: deps.sleep,
    limit: MATRIX_LIMIT,
    unit: "utf8",
    ...homeChannelOf(settings),
    chatRefused: roomRefused,
    check: async (signal) =>
      stringField(
        await api.call("whoami", "GET", "/_matrix/client/v3/account/whoami", { signal }),
        "user_id",
      ),
    // A transaction id derived from the delivery makes a retried PUT idempotent on the homeserver. Delivery
    // ids are unique per route only (idempotency is per route), so the route is part of it.
    async sendPart({ chatId, text, index, message, signal }) {
      const txn = encodeURIComponent(partKey(message, index));
      // deliver_extra.thread_id: the thread root's event id (spec v1.4 threads, `rel_type: m.thread`).
      const thread = threadOf(message);
      const relation =
        thread === undefined ? {} : { "m.relates_to": { rel_type: "m.thread", event_id: thread } };
      // An empty m.mentions turns off the body-based push rules (@room, names): payload text is untrusted.
      const json = { msgtype: "m.text", body: text, "m.mentions": {}, ...relation };
      if (!chatId.startsWith("#")) return send(chatId, txn, json, signal);
      const kept = roomIds.get(chatId);
      if (kept === undefined) return send(await resolve(chatId, signal), txn, json, signal);
      try {
        return await send(kept, txn, json, signal);
      } catch (err) {
        // The room kept for the alias refused the message: the alias may name another room now (a room
        // upgrade moves it to the new room and closes the old one), so it is asked again.
        if (!roomRefused(err)) throw err;
        roomIds.delete(chatId);
        const now = await resolve(chatId, signal);
        if (now === kept) throw err;
        return send(now, txn, json, signal);
      }
    },
    // A chat's session is keyed by the room ID its events carry, not by an alias naming it.
    deliveredTo: (chatId) => roomIds.get(chatId) ?? chatId,
  });
}

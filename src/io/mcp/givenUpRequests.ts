/**
 * What `answerDroppedStreams` does with a POST's requests once they are given up or answered, whose streams a
 * server may hold open: the cancel that gives a request up, the POST given up before its answer's headers
 * came, and a resumption of an answered stream, answered here.
 */

import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

export type Id = string | number;

/** The JSON-RPC messages of a POST body (one message or a batch); none when it is no JSON text. */
export function postedMessages(body: unknown): unknown[] {
  if (typeof body !== "string") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** The requests a POST body cancels (`notifications/cancelled`: a request given up, its timeout or an abort). */
export function cancelledIds(body: unknown): Id[] {
  if (typeof body !== "string" || !body.includes("notifications/cancelled")) return [];
  return postedMessages(body).flatMap((m) => {
    const msg = m as { method?: unknown; params?: { requestId?: unknown } };
    const id = msg?.method === "notifications/cancelled" ? msg.params?.requestId : undefined;
    return typeof id === "string" || typeof id === "number" ? [id] : [];
  });
}

/**
 * The SDK's client resumes a POST's stream that carried an event id and no result once it ends (GET with
 * Last-Event-ID), also when it was answered with an error: the server then keeps the resumed stream open
 * for the session's life, one more per error answer. A resumption of such a stream, whose requests are all
 * answered, is answered here as a server without resumable streams answers (405), which the SDK takes
 * quietly; the server is not asked.
 */
export function resumedAnswered(init: RequestInit | undefined, answered: Set<string>): boolean {
  if ((init?.method ?? "GET") !== "GET" || answered.size === 0) return false;
  const lastEventId = new Headers(init?.headers).get("last-event-id");
  return lastEventId !== null && answered.delete(lastEventId);
}

/**
 * Sends a POST whose requests, given up before their answer is read, give up the POST itself: a server
 * answering in JSON sends its answer once every request is done, and none for a cancelled one, so the POST
 * would wait for the session's life. `read` runs while that still holds: a JSON answer is read whole there,
 * so a server that sent its headers and never the body has that connection closed when the requests are
 * given up, not left open for the session's life. (Once an SSE stream answers, the stream is closed instead.)
 */
export async function postGivenUp(
  base: FetchLike,
  url: string | URL,
  init: RequestInit | undefined,
  ids: readonly Id[],
  waiting: Map<Id, (id: Id) => void>,
  read: (response: Response) => Response | Promise<Response>,
): Promise<Response> {
  if (ids.length === 0) return read(await base(url, init));
  const posted = new AbortController();
  const given = new Set<Id>();
  for (const id of ids)
    waiting.set(id, (gone) => {
      given.add(gone);
      if (given.size === ids.length) posted.abort();
    });
  const signal = init?.signal ? AbortSignal.any([init.signal, posted.signal]) : posted.signal;
  try {
    return await read(await base(url, { ...init, signal }));
  } finally {
    for (const id of ids) waiting.delete(id);
  }
}

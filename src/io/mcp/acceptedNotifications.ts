import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** Whether a POST body holds JSON-RPC notifications or answers only (no request, so nothing to answer). */
function noRequests(body: unknown): boolean {
  if (typeof body !== "string") return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.every((m) => {
    const msg = m as { id?: unknown; method?: unknown } | null;
    return (
      msg !== null && typeof msg === "object" && !(typeof msg.method === "string" && msg.id !== undefined)
    );
  });
}

/**
 * Streamable HTTP: a POST of notifications that the server accepts with another 2xx than MCP's
 * `202 Accepted` (`200 OK`, `204 No Content`, as servers written on web frameworks answer) is taken as
 * accepted. The SDK's transport opens the event stream that carries the server's own messages
 * (`tools/list_changed`, log messages, requests) only once `notifications/initialized` is answered 202, so
 * such a server's messages were all lost without a word.
 */
export function acceptedNotifications(base: FetchLike): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (init?.method !== "POST" || !response.ok || response.status === 202 || !noRequests(init.body))
      return response;
    await response.body?.cancel();
    return new Response(null, { status: 202, statusText: "Accepted", headers: response.headers });
  };
}

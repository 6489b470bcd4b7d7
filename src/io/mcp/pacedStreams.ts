import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { untilReady } from "../untilReady.js";

/** The least time between the end of the server's event stream and the next `GET` that reopens it. */
export const MIN_REOPEN_MS = 1000;
/** The most, once it kept ending at once (the MCP SDK's own longest reconnection delay). */
export const MAX_REOPEN_MS = 30_000;
/** A stream open this long counts as a working one when it ends, though it carried no message. */
const LIVED_MS = 10_000;

/** The stream the client opens with `GET` for the server's own messages; not a resumption (`Last-Event-ID`). */
function serverStream(init: RequestInit | undefined): boolean {
  return (init?.method ?? "GET") === "GET" && !new Headers(init?.headers).has("last-event-id");
}

/**
 * Where a server's refusal of its event stream (405 to the `GET`) is kept: for one connection by default
 * (`oneConnection`); the hub keeps it for the server (`McpHub`), so a reconnect does not ask again.
 */
export interface StreamRefusal {
  readonly refused: () => boolean;
  readonly refuse: () => void;
}

/** A refusal kept for one connection only. */
export function oneConnection(): StreamRefusal {
  let refused = false;
  return {
    refused: () => refused,
    refuse: () => {
      refused = true;
    },
  };
}

/**
 * Streamable HTTP: the event stream a client opens with `GET` for the server's own messages is reopened by
 * the MCP SDK's transport each time it ends, after the server's `retry` (any value, 0 too) or 1 s: a server
 * (or a proxy) that ends it at once had it reopened in a hot loop, or once a second for the session's life.
 * Here a reopen waits at least 1 s after the last stream's end, and each stream in a row that ended carrying
 * no message before 10 s doubles that wait, up to 30 s; a stream that carried a message or lived 10 s sets
 * it back to 1 s. A server that refused the stream with 405 (it offers none) is not asked again while
 * `refusal` keeps that (this connection, unless given): a later `GET` is answered 405 here. Resumptions
 * (`Last-Event-ID`) and POSTs pass untouched.
 */
export function pacedServerStreams(base: FetchLike, refusal: StreamRefusal = oneConnection()): FetchLike {
  let gap = 0;
  let ready: Promise<void> | undefined;
  const ended = (carried: boolean) => {
    gap = carried ? MIN_REOPEN_MS : Math.min(Math.max(MIN_REOPEN_MS, gap * 2), MAX_REOPEN_MS);
    ready = new Promise<void>((resolve) => {
      setTimeout(resolve, gap).unref?.();
    });
  };
  return async (url, init) => {
    if (!serverStream(init)) return base(url, init);
    if (refusal.refused()) return new Response(null, { status: 405, statusText: "Method Not Allowed" });
    if (ready !== undefined) await untilReady(ready, init?.signal);
    const response = await base(url, init);
    if (response.status === 405) refusal.refuse();
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok || response.body === null || !type.includes("text/event-stream")) return response;
    const reader = response.body.getReader();
    let carried = false;
    let lived = false;
    const timer = setTimeout(() => {
      lived = true;
    }, LIVED_MS);
    timer.unref?.();
    const decoder = new TextDecoder();
    const finish = () => {
      clearTimeout(timer);
      ended(carried || lived);
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          finish();
          controller.error(err);
          return;
        }
        if (chunk.done) {
          finish();
          controller.close();
          return;
        }
        if (!carried && decoder.decode(chunk.value, { stream: true }).includes("data:")) carried = true;
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => {
        clearTimeout(timer);
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

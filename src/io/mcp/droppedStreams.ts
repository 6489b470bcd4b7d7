import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/** `data` of the error answered for a request whose response stream ended without its answer. */
export const STREAM_DROPPED = "response_stream_dropped";

type Id = string | number;

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: unknown): Id[] {
  if (typeof body !== "string") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((m) => {
    const msg = m as { id?: unknown; method?: unknown };
    return typeof msg?.method === "string" && (typeof msg.id === "string" || typeof msg.id === "number")
      ? [msg.id]
      : [];
  });
}

/** Just enough of an SSE parser to see event ids and which requests were answered. */
class SseWatch {
  resumable = false;
  private buffer = "";
  private data: string[] = [];
  private readonly decoder = new TextDecoder();

  constructor(readonly pending: Set<Id>) {}

  feed(chunk: Uint8Array): void {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? "";
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    if (line === "") {
      this.dispatch();
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") this.data.push(value);
    else if (field === "id" && value !== "") this.resumable = true;
  }

  private dispatch(): void {
    const text = this.data.join("\n");
    this.data = [];
    if (text === "") return;
    try {
      const parsed = JSON.parse(text) as unknown;
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        const msg = m as { id?: Id; result?: unknown; error?: unknown };
        if (msg?.id !== undefined && ("result" in msg || "error" in msg)) this.pending.delete(msg.id);
      }
    } catch {
      // Not JSON: the SDK reports it; nothing answered.
    }
  }
}

function droppedAnswers(ids: Iterable<Id>, why: string): Uint8Array {
  const events = [...ids].map((id) => {
    const error = {
      code: ErrorCode.ConnectionClosed,
      message: `the server closed the response stream before answering (${why})`,
      data: STREAM_DROPPED,
    };
    return `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error })}\n\n`;
  });
  return new TextEncoder().encode(events.join(""));
}

/**
 * Streamable HTTP: a POST answered with an SSE stream that ends (or breaks) before the answer, with no
 * event id to resume from, leaves the SDK's request waiting for its full timeout (300 s by default). This
 * fetch answers such requests itself with a JSON-RPC error marked `STREAM_DROPPED`, so the call fails at
 * once and the caller can tell "the outcome is unknown" from "the server said no".
 */
export function answerDroppedStreams(base: FetchLike): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const ids = init?.method === "POST" ? requestIds(init.body) : [];
    const type = response.headers.get("content-type") ?? "";
    if (ids.length === 0 || !response.ok || response.body === null || !type.includes("text/event-stream"))
      return response;
    const watch = new SseWatch(new Set(ids));
    const reader = response.body.getReader();
    const finish = (controller: ReadableStreamDefaultController<Uint8Array>, why: string): boolean => {
      if (watch.resumable || watch.pending.size === 0 || init?.signal?.aborted === true) return false;
      controller.enqueue(droppedAnswers(watch.pending, why));
      controller.close();
      return true;
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          const aborted = (err as Error).name === "AbortError";
          if (aborted || !finish(controller, (err as Error).message || "stream error")) controller.error(err);
          return;
        }
        if (chunk.done) {
          if (!finish(controller, "stream ended")) controller.close();
          return;
        }
        watch.feed(chunk.value);
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

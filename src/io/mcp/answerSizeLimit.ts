import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { MAX_STDIO_MESSAGE_BYTES } from "./stdioTransport.js";

/** The most one message of a url server may take: a JSON body, or one event of an SSE stream (as a stdio line). */
export const MAX_HTTP_MESSAGE_BYTES = MAX_STDIO_MESSAGE_BYTES;

/** A url server's answer went past `MAX_HTTP_MESSAGE_BYTES`: svc stopped reading it. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(
      `the server's answer is more than ${Math.round(limit / 1024 / 1024)} MiB (svc's limit for one message), so svc stopped reading it`,
    );
    this.name = "AnswerTooLargeError";
  }
}

/** How `AnswerTooLargeError` reads where only its text is left (an SSE stream's error event). */
export const ANSWER_TOO_LARGE_TEXT =
  /^the server's answer is more than \d+ MiB \(svc's limit for one message\)/;

const LF = 10;
const CR = 13;

/**
 * Counts the bytes of the SSE event being read: an empty line (CRLF, LF or CR) ends an event and starts
 * the count over, so a stream that stays open for hours is bounded per event, not in all.
 */
function eventBytes(limit: number): (chunk: Uint8Array) => boolean {
  let size = 0;
  let lineEmpty = true;
  let afterCr = false;
  return (chunk) => {
    // Line ends are found with indexOf (native): an event of many megabytes is read byte by byte otherwise.
    let nextLf = chunk.indexOf(LF);
    let nextCr = chunk.indexOf(CR);
    for (let at = 0; at < chunk.length; ) {
      if (nextLf !== -1 && nextLf < at) nextLf = chunk.indexOf(LF, at);
      if (nextCr !== -1 && nextCr < at) nextCr = chunk.indexOf(CR, at);
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      const textEnd = end === -1 ? chunk.length : end;
      if (textEnd > at) {
        size += textEnd - at;
        if (size > limit) return true;
        lineEmpty = false;
        afterCr = false;
      }
      if (end === -1) break;
      at = end + 1;
      // The LF of a CRLF ends no second line.
      if (chunk[end] === LF && afterCr) {
        afterCr = false;
        continue;
      }
      afterCr = chunk[end] === CR;
      if (lineEmpty) size = 0;
      lineEmpty = true;
    }
    return false;
  };
}

function bodyBytes(limit: number): (chunk: Uint8Array) => boolean {
  let size = 0;
  return (chunk) => {
    size += chunk.byteLength;
    return size > limit;
  };
}

/** Statuses whose Response carries no body (the constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * Reads every answer of a url server (a POST's JSON or event stream, the GET stream, an error's body) with
 * a bound: the SDK's transports read a JSON body whole and an SSE event up to its end, so a server
 * answering without end (a runaway tool, a bug) would grow the gateway until the system kills it. Past the
 * limit the body is cancelled and its stream fails with `AnswerTooLargeError`.
 */
export function boundedAnswers(base: FetchLike, limit = MAX_HTTP_MESSAGE_BYTES): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null || NULL_BODY.has(response.status)) return response;
    const over = (response.headers.get("content-type") ?? "").includes("text/event-stream")
      ? eventBytes(limit)
      : bodyBytes(limit);
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = await reader.read();
        if (chunk.done) {
          controller.close();
          return;
        }
        if (over(chunk.value)) {
          reader.cancel().catch(() => undefined);
          controller.error(new AnswerTooLargeError(limit));
          return;
        }
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

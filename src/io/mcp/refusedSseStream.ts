import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isSseError } from "./clientErrors.js";

interface Refusal {
  readonly status: number;
  readonly body: string;
}

/**
 * The SSE stream's GET refused (4xx, 5xx) reads as a refused POST does: the EventSource reads no body
 * and says only `Non-200 status code (401)`, where a POST says `Error POSTing to endpoint (HTTP 401): <body>`
 * — and the body is often the reason (`invalid token`, `key lacks scope`).
 */
export class RefusedSseStream {
  #last: Refusal | undefined;

  /** `base` for the stream's GET, keeping the body of a refusal; the answer goes on as it came. */
  fetch(base: FetchLike): FetchLike {
    return async (url, init) => {
      const response = await base(url, init);
      if (response.status < 400) return response;
      // Bounded already (boundedAnswers): an answer past svc's limit leaves no body to quote.
      const body = await response.text().catch(() => "");
      this.#last = { status: response.status, body };
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  /**
   * The SDK's error for the refusal, worded `Error GETting the SSE stream (HTTP 401): <body>` (still the
   * SDK's `SseError`, whose `code` is the status); any other error as it is. The body is quoted whole:
   * `describeTransportError` puts it on one line and cuts it, as a POST's.
   */
  reword(err: unknown): unknown {
    const refusal = this.#last;
    if (!isSseError(err) || refusal === undefined || err.code !== refusal.status) return err;
    const body = refusal.body.trim();
    err.message = `Error GETting the SSE stream (HTTP ${refusal.status})${body === "" ? "" : `: ${body}`}`;
    return err;
  }
}

import { type FetchLike, isWithinOrigin } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { AnswerTooLargeError } from "./answerSizeLimit.js";
import { cancelledIds, type Id, postedMessages, postGivenUp, resumedAnswered } from "./givenUpRequests.js";
import { type Redact, unreadableAnswer, withoutNullMembers } from "./unreadableAnswer.js";

/** `data` of the error answered for a request whose response stream ended without its answer. */
export const STREAM_DROPPED = "response_stream_dropped";

/**
 * `data` of the error answered for a request whose response stream ended without its answer and whose
 * resumption the server refused (`refusedResume`): the answer is lost as with `STREAM_DROPPED`.
 */
export const STREAM_NOT_RESUMED = "response_stream_not_resumed";

/** The HTTP status that refused a cut stream's resumption, as a `STREAM_NOT_RESUMED` error's message names it. */
export function refusedResumeStatus(message: string): number | undefined {
  const status = /\(HTTP (\d{3}) to the GET with Last-Event-ID/.exec(message)?.[1];
  return status === undefined ? undefined : Number(status);
}

/** `data` of the error answered for a request whose answer went past svc's size limit (`boundedAnswers`). */
export const ANSWER_TOO_LARGE = "answer_too_large";

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: unknown): Id[] {
  return postedMessages(body).flatMap((m) => {
    const msg = m as { id?: unknown; method?: unknown };
    return typeof msg?.method === "string" && (typeof msg.id === "string" || typeof msg.id === "number")
      ? [msg.id]
      : [];
  });
}

/**
 * Just enough of an SSE parser to see event ids and which requests were answered, and to split a batch:
 * an event whose data is a JSON-RPC batch (an array, which a 2025-03-26 server may send) is passed on as
 * one event per message, since the SDK's transport reads one message per event and skipped the batch.
 * Every other event is passed on as it came, byte for byte.
 */
class SseWatch {
  resumable = false;
  /** The id of the last event that had one: where the SDK would resume the stream from. */
  lastEventId: string | undefined;
  /** Whether one of the requests was answered with a result (the SDK resumes a stream that carried none). */
  resulted = false;
  /** Error answers standing in for answers to the requests that are not valid JSON-RPC (`unreadableAnswer`). */
  readonly unreadable: JSONRPCMessage[] = [];
  /** The line being read, in the pieces it came in (joined once it ends: a long line costs no rescans). */
  private partial: string[] = [];
  private data: string[] = [];
  private eventId: string | undefined;
  /** The event being read, as it came. */
  private raw = "";
  /** Events ready to be passed on, each its own text. */
  private out: string[] = [];
  private readonly decoder = new TextDecoder();
  /** The chunk so far ended in a CR (`feed`). */
  private crHeld = false;
  /** Why the last event whose data is not JSON could not be read: the stream's answer, garbled. */
  notJson: string | undefined;

  constructor(
    readonly pending: Set<Id>,
    private readonly redact?: Redact,
  ) {}

  /** Reads a chunk; returns the events it completed, to pass on one chunk each (see `answerDroppedStreams`). */
  feed(chunk: Uint8Array): string[] {
    // Only the new text is searched for line ends: an event of many megabytes (a tool's big result) comes
    // in many chunks, and searching all of it again at each would take minutes.
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.crHeld) text = `\r${text}`;
    // A CR that ends the chunk may be the first half of a CRLF whose LF comes in the next one: held until
    // it shows. Taken for a line end, it ended the event there, the stream was closed once every request was
    // answered, and the SDK's parser waited for that LF for good (the call ran out its timeout).
    this.crHeld = text.endsWith("\r");
    if (this.crHeld) text = text.slice(0, -1);
    const ends = /\r\n|\r|\n/g;
    let start = 0;
    for (let end = ends.exec(text); end !== null; end = ends.exec(text)) {
      const line = this.partial.join("") + text.slice(start, end.index);
      this.partial = [];
      this.raw += line + end[0];
      this.line(line);
      start = ends.lastIndex;
    }
    if (start < text.length) this.partial.push(text.slice(start));
    const out = this.out;
    this.out = [];
    return out;
  }

  /** What is left at the stream's end: an unfinished event, as it came. */
  rest(): string {
    const rest = this.raw + this.partial.join("") + (this.crHeld ? "\r" : "");
    this.crHeld = false;
    this.raw = "";
    this.partial = [];
    return rest;
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
    else if (field === "id" && value !== "") {
      this.resumable = true;
      this.eventId = value;
      this.lastEventId = value;
    }
  }

  private dispatch(): void {
    const text = this.data.join("\n");
    const id = this.eventId;
    const raw = this.raw;
    this.data = [];
    this.eventId = undefined;
    this.raw = "";
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
    } catch (err) {
      // Not JSON: the SDK reports it, and its answer is taken for this (`notJsonAnswers`), not a lost stream.
      this.notJson = (err as Error).message;
    }
    const batch = Array.isArray(parsed) && parsed.length > 0 ? (parsed as unknown[]) : undefined;
    // A message with members it does not use written as null (`withoutNullMembers`) goes on as the one it means.
    const oneMember = batch === undefined ? withoutNullMembers(parsed) : undefined;
    if (batch !== undefined)
      this.out.push(
        ...events(
          batch.map((m) => withoutNullMembers(m) ?? m),
          id,
        ),
      );
    else this.out.push(oneMember !== undefined ? events([oneMember], id).join("") : raw);
    if (parsed === undefined) return;
    for (const item of batch ?? [parsed]) {
      const m = withoutNullMembers(item) ?? item;
      const msg = m as { id?: Id; method?: unknown };
      if (msg?.id === undefined || msg.id === null || "method" in msg || !this.pending.has(msg.id)) continue;
      // An answer the SDK's transport cannot read is skipped there, and its call would wait out its
      // timeout: an error answer saying why is sent after it, at the stream's end.
      const answer = JSONRPCMessageSchema.safeParse(m).success ? undefined : unreadableAnswer(m, this.redact);
      if (answer !== undefined) this.unreadable.push(answer);
      else if ("result" in (m as object)) this.resulted = true;
      this.pending.delete(msg.id);
    }
  }
}

/** The requests' answer was too large to read: the server answered, and the session is well. */
function tooLargeAnswers(ids: Iterable<Id>, err: AnswerTooLargeError): JSONRPCMessage[] {
  return [...ids].map((id) => ({
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InternalError, message: err.message, data: ANSWER_TOO_LARGE },
  }));
}

function droppedAnswers(ids: Iterable<Id>, why: string): JSONRPCMessage[] {
  return [...ids].map((id) => ({
    jsonrpc: "2.0",
    id,
    error: {
      code: ErrorCode.ConnectionClosed,
      message: `the server closed the response stream before answering (${why})`,
      data: STREAM_DROPPED,
    },
  }));
}

/** An error answer to each of `ids`, whose answer the server wrote as no JSON (the parser's `why`). */
function notJsonAnswers(ids: Iterable<Id>, why: string): JSONRPCMessage[] {
  return [...ids].map((id) => ({
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InternalError, message: `the server's answer is not valid JSON (${why})` },
  }));
}

/** Messages as SSE events, one each; an event id goes on the last (where a resumed stream goes on from). */
function events(messages: readonly unknown[], id?: string): string[] {
  return messages.map(
    (message, i) =>
      `event: message\n${id !== undefined && i === messages.length - 1 ? `id: ${id}\n` : ""}data: ${JSON.stringify(message)}\n\n`,
  );
}

const encode = (text: string) => new TextEncoder().encode(text);

/** A member of a JSON-RPC message written as `null` (`"error": null`, `"params" : null`), or its `_meta`. */
const NULL_MEMBER = /"(?:result|error|params|id|_meta)"\s*:\s*null/;

/**
 * A POST's JSON answer (one message or a batch) with each message that writes a member it does not use as
 * null (an answer both result and error) as the one it means (`withoutNullMembers`): the SDK's transport
 * refuses the whole body otherwise. The body is read here, as the SDK reads it whole; only one that holds such a member is parsed.
 */
async function withOneMemberJson(response: Response): Promise<Response> {
  let body = await response.text();
  if (NULL_MEMBER.test(body)) {
    try {
      const parsed = JSON.parse(body) as unknown;
      const fixed = Array.isArray(parsed)
        ? parsed.map((m: unknown) => withoutNullMembers(m) ?? m)
        : (withoutNullMembers(parsed) ?? parsed);
      body = JSON.stringify(fixed);
    } catch {
      // Not JSON: the SDK's transport says so.
    }
  }
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * A 3xx answering the GET to `url` that the SDK's transport does not follow, said with its target (without
 * userinfo, query or fragment); undefined for a redirect it follows (within the origin, adding no userinfo).
 */
function unfollowedRedirect(url: string | URL, response: Response): string | undefined {
  const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get("location") : null;
  if (location === null) return "not a redirect that can be followed (no Location)";
  let target: URL;
  try {
    target = new URL(location, url);
  } catch {
    return `a redirect to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`;
  }
  const from = new URL(url);
  const addsUserinfo =
    (target.username !== "" || target.password !== "") &&
    (target.username !== from.username || target.password !== from.password);
  if (!addsUserinfo && isWithinOrigin(from, target)) return undefined;
  target.username = target.password = target.search = target.hash = "";
  return `a redirect to ${target.href}, ${addsUserinfo ? "adding credentials" : "another origin"}, which is not followed`;
}

/**
 * A resumption (GET with Last-Event-ID) of a POST's stream that ended before its answers, refused with an
 * HTTP error status: the SDK takes a 405 quietly, and the calls would wait out their timeout for answers that
 * will never come; any other status it tries again once, then gives the whole session up (about 2.5 s), the
 * calls failing as a lost connection that does not say the server refused. It is answered here with a
 * stream of errors (`STREAM_NOT_RESUMED`) for those calls naming the status, carrying the event id, whose
 * own resumption is then answered 405 here (`resumedAnswered`). A redirect within the origin is left to the
 * SDK, which follows it with the same Last-Event-ID; one it does not follow (`unfollowedRedirect`), which it
 * would take as a failure to open the stream and try again, is a refusal naming its target.
 * Undefined for any other request or answer.
 */
function refusedResume(
  url: string | URL,
  init: RequestInit | undefined,
  response: Response,
  cut: Map<string, Id[]>,
  answered: Set<string>,
): Response | undefined {
  if (cut.size === 0 || (init?.method ?? "GET") !== "GET") return undefined;
  const lastEventId = new Headers(init?.headers).get("last-event-id");
  const ids = lastEventId === null ? undefined : cut.get(lastEventId);
  if (lastEventId === null || ids === undefined) return undefined;
  const redirect = response.status >= 300 && response.status < 400;
  const unfollowed = redirect ? unfollowedRedirect(url, response) : undefined;
  if (redirect && unfollowed === undefined) return undefined;
  cut.delete(lastEventId);
  if (response.ok) return undefined;
  void response.body?.cancel().catch(() => undefined);
  answered.add(lastEventId);
  const errors: JSONRPCMessage[] = ids.map((id) => ({
    jsonrpc: "2.0",
    id,
    error: {
      code: ErrorCode.ConnectionClosed,
      message: `the server cut the call's response stream before answering and refused to resume it (HTTP ${response.status} to the GET with Last-Event-ID${unfollowed === undefined ? "" : `: ${unfollowed}`})`,
      data: STREAM_NOT_RESUMED,
    },
  }));
  return new Response(encode(events(errors, lastEventId).join("")), {
    status: 200,
    headers: { "content-type": "text/event-stream" },
  });
}

/**
 * Streamable HTTP: a POST answered with an SSE stream that ends (or breaks) before the answer, with no
 * event id to resume from, leaves the SDK's request waiting for its full timeout (300 s by default). This
 * fetch answers such requests itself with a JSON-RPC error marked `STREAM_DROPPED`, so the call fails at
 * once and the caller can tell "the outcome is unknown" from "the server said no". An answer in the stream
 * that is not valid JSON-RPC (which the SDK's transport skips) is followed, at the stream's end, by an error
 * answer saying what is wrong with it (`unreadableAnswer`), so its call fails then too.
 * A POST's stream is closed once each of its requests is answered or given up (the Python SDK's client
 * closes it once answered too), whether or not the server ends it. A GET's stream (the server's own requests
 * and notifications, or a POST's stream resumed) has no request of its own to answer: it is only split where
 * an event holds a batch (`SseWatch`), like a POST's. A message
 * that writes the members it does not use as null (an answer both result and error, a notification
 * `params: null`) is passed on as the one it means, in a stream or a POST's JSON body alike
 * (`withoutNullMembers`). What an error answer quotes of the server's is `redact`ed before it is cut.
 */
export function answerDroppedStreams(base: FetchLike, redact?: Redact): FetchLike {
  // The last event ids of POST streams closed once answered with errors alone (see `resumedAnswered`).
  const answered = new Set<string>();
  // The POST streams still waiting for answers, by their requests' ids: a request given up (its timeout, the
  // caller's abort) is cancelled at the server, which then sends no answer and may never end the stream.
  const waiting = new Map<Id, (id: Id) => void>();
  // The requests of POST streams that ended unanswered with an event id, by that id: the SDK resumes such a
  // stream with GET and Last-Event-ID; a server that refuses (an HTTP error) leaves them unanswered (`refusedResume`).
  const cut = new Map<string, Id[]>();
  return async (url, init) => {
    if (resumedAnswered(init, answered)) return new Response(null, { status: 405 });
    const ids = init?.method === "POST" ? requestIds(init.body) : [];
    // A JSON answer is read whole while its requests can still give the POST up (`postGivenUp`).
    const response = await postGivenUp(base, url, init, ids, waiting, (answer) =>
      ids.length > 0 &&
      answer.ok &&
      answer.body !== null &&
      (answer.headers.get("content-type") ?? "").includes("application/json")
        ? withOneMemberJson(answer)
        : answer,
    );
    const refused = refusedResume(url, init, response, cut, answered);
    if (refused !== undefined) return refused;
    // Closed once the server has the cancel (this POST's), so it is told before the stream goes.
    if (waiting.size > 0 && init?.method === "POST")
      for (const id of cancelledIds(init.body)) waiting.get(id)?.(id);
    const type = response.headers.get("content-type") ?? "";
    // (An EventSource, the SSE transport's stream, sends its GET without naming the method.)
    const watched = ids.length > 0 || (init?.method ?? "GET") === "GET";
    if (!watched || !response.ok || response.body === null || !type.includes("text/event-stream"))
      return response;
    const watch = new SseWatch(new Set(ids), redact);
    const reader = response.body.getReader();
    const release = () => {
      for (const id of ids) waiting.delete(id);
    };
    // Each of its requests given up: the stream ends (as for one answered), and is not resumed either.
    const giveUp = (id: Id) => {
      waiting.delete(id);
      watch.pending.delete(id);
      if (watch.pending.size > 0) return;
      if (watch.lastEventId !== undefined) answered.add(watch.lastEventId);
      void reader.cancel().catch(() => undefined);
    };
    for (const id of ids) waiting.set(id, giveUp);
    const finish = (controller: ReadableStreamDefaultController<Uint8Array>, why: string): boolean => {
      if (init?.signal?.aborted === true) return false;
      if (
        ids.length > 0 &&
        watch.resumable &&
        watch.notJson === undefined &&
        watch.lastEventId !== undefined &&
        watch.pending.size > 0
      )
        cut.set(watch.lastEventId, [...watch.pending]);
      // A stream that held an event the server wrote as no JSON answered, garbled: not a lost connection (its
      // call was run; a read-only one would be replayed for the server's malformed output).
      const garbled = watch.notJson === undefined ? [] : notJsonAnswers(watch.pending, watch.notJson);
      const answers = [
        ...watch.unreadable,
        ...(garbled.length > 0 ? garbled : watch.resumable ? [] : droppedAnswers(watch.pending, why)),
      ];
      if (answers.length === 0) return false;
      controller.enqueue(encode(events(answers).join("")));
      controller.close();
      return true;
    };
    const body = new ReadableStream<Uint8Array>({
      // A pull that returns without enqueueing is not called again for the read waiting on it, so it
      // reads on until an event is complete: an answer larger than one chunk (a tool's big result comes
      // in many) would otherwise stall the stream and leave its call to wait out its timeout.
      async pull(controller) {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            release();
            if (err instanceof AnswerTooLargeError && watch.pending.size > 0) {
              controller.enqueue(encode(events(tooLargeAnswers(watch.pending, err)).join("")));
              controller.close();
              return;
            }
            const aborted = (err as Error).name === "AbortError";
            if (aborted || !finish(controller, (err as Error).message || "stream error"))
              controller.error(err);
            return;
          }
          if (chunk.done) {
            release();
            const rest = watch.rest();
            if (rest !== "") controller.enqueue(encode(rest));
            if (!finish(controller, "stream ended")) controller.close();
            return;
          }
          // One chunk per event: the SSE transport's EventSource reads a chunk's events in one go, and the SDK
          // runs a notification's handler a microtask later, so a progress notification that came in one
          // chunk with the call's answer reached it after the answer had removed its handler, and was lost.
          const completed = watch.feed(chunk.value);
          if (completed.length > 0) {
            for (const text of completed) controller.enqueue(encode(text));
            // Every request of the POST is answered: the stream is done, though a server may keep it open
            // (MCP says it should end it), which would hold a connection per call for the session's life.
            if (ids.length > 0 && watch.pending.size === 0) {
              release();
              if (watch.unreadable.length > 0) controller.enqueue(encode(events(watch.unreadable).join("")));
              if (watch.lastEventId !== undefined && !watch.resulted) answered.add(watch.lastEventId);
              controller.close();
              void reader.cancel().catch(() => undefined);
            }
            return;
          }
        }
      },
      cancel: (reason) => {
        release();
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

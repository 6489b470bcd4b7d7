import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { scrub } from "../../io/credentials.js";
import { AnswerTooLargeError } from "../../io/mcp/answerSizeLimit.js";
import { isStreamableHttpError } from "../../io/mcp/clientErrors.js";
import {
  ANSWER_TOO_LARGE,
  refusedResumeStatus,
  STREAM_DROPPED,
  STREAM_NOT_RESUMED,
} from "../../io/mcp/droppedStreams.js";
import { describeTransportError, httpStatusOf } from "../../io/mcp/transportErrors.js";

/**
 * The server forgot our session (Streamable HTTP: 404 for the session id; SSE: 404 on the message
 * endpoint). Servers built from the TypeScript SDK's examples answer 400 instead ("Bad Request: No valid
 * session ID provided", "No transport found for sessionId"): a 400 that names the session counts too.
 * Only the transport's refusal counts: a JSON-RPC error answer (a tool's failure quoting an upstream API's
 * `(HTTP 404)`) came over a session the server knows.
 */
export function isSessionExpired(err: unknown): boolean {
  if (err instanceof McpError) return false;
  if (isStreamableHttpError(err))
    return err.code === 404 || (err.code === 400 && /session/i.test(err.message));
  return err instanceof Error && /\(HTTP 404\)|\(HTTP 400\):.*session/is.test(err.message);
}

/**
 * The server's saved OAuth login cannot be used (`NeedsLoginError` in src/actors/oauth/refresh.ts: a refresh
 * token refused, no saved tokens; `ClientRefusedError` there: the configured client refused at a refresh;
 * `FreshTokenRefusedError` in provider.ts: a newly issued token refused by the server): every request fails
 * the same way until the user logs in again. Its message, when so, from the error or one of its causes.
 */
export function loginNeeded(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if ((e as { loginNeeded?: unknown }).loginNeeded === true) return e.message;
  return undefined;
}

/**
 * The server refused the request's credentials (HTTP 401): Streamable HTTP's error carries the status, the
 * SSE transport's POST puts it in its message only (`Error POSTing to endpoint (HTTP 401): …`).
 */
export function isUnauthorized(err: unknown): boolean {
  if (httpStatusOf(err) !== undefined) return httpStatusOf(err) === 401;
  return err instanceof Error && /^Error POSTing to endpoint \(HTTP 401\)/.test(err.message);
}

/**
 * The wait for an answer ran out on our side: the SDK's request timeout (or svc's, bounding a task or a list's
 * pages), which carries the wait in `data`. A server's own error answer with the same code (JSON-RPC leaves
 * -32000 to -32099 to servers: a rate limit, an upstream failure) is the server's error, not a timeout.
 */
export function isRequestTimeout(err: unknown): boolean {
  return (
    err instanceof McpError &&
    err.code === ErrorCode.RequestTimeout &&
    typeof (err.data as { timeout?: unknown } | undefined)?.timeout === "number"
  );
}

/** A Streamable HTTP response stream ended before the call's answer (see `answerDroppedStreams`). */
export function isStreamDropped(err: unknown): boolean {
  return (
    err instanceof McpError &&
    err.code === ErrorCode.ConnectionClosed &&
    (err.data === STREAM_DROPPED || err.data === STREAM_NOT_RESUMED)
  );
}

/** Why the answer was lost, when the server refused to resume the call's cut response stream (an HTTP error). */
export function notResumed(err: unknown): string | undefined {
  if (!(err instanceof McpError) || err.data !== STREAM_NOT_RESUMED) return undefined;
  return err.message.replace(/^MCP error -?\d+: /, "");
}

/**
 * A call's cut response stream whose resumption the server refused with HTTP 404: the status Streamable HTTP
 * gives a session id it no longer knows, so the session was forgotten (not a connection that dropped).
 */
export function resumeSessionForgotten(err: unknown): boolean {
  return notResumed(err) !== undefined && refusedResumeStatus((err as McpError).message) === 404;
}

/**
 * Why the answer was not read, when it was over svc's limit for one message of a url server: a JSON body
 * (the fetch failed with the error) or an event of a POST's stream (answered with an error marked so).
 */
export function answerTooLarge(err: unknown): string | undefined {
  if (err instanceof AnswerTooLargeError) return err.message;
  if (err instanceof McpError && err.data === ANSWER_TOO_LARGE)
    return err.message.replace(/^MCP error -?\d+: /, "");
  return undefined;
}

/**
 * The request went out but its answer can no longer come: the response stream ended early, or the
 * server closed or reset the connection after the request was written (undici: `other side closed`,
 * a body cut off: `terminated`, `ECONNRESET`, `EPIPE`). Unlike a refused connection, the server may
 * have run the call.
 */
export function isAnswerLost(err: unknown): boolean {
  if (isStreamDropped(err)) return true;
  let cause: unknown = err;
  for (let depth = 0; cause instanceof Error && depth < 4; depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE") return true;
    if (cause instanceof TypeError && cause.message === "terminated") return true;
    cause = cause.cause;
  }
  return false;
}

/** The connection went away under a call (process exit, closed stream). */
export function isConnectionClosed(err: unknown): boolean {
  return err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** The request could not reach the server at all (refused, reset, no route): the connection is gone. */
export function isUnreachable(err: unknown): boolean {
  let cause: unknown = err;
  for (let depth = 0; cause instanceof Error && depth < 4; depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === "string" && UNREACHABLE.has(code)) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * Why a request svc makes of its own accord failed — a keepalive ping, the `tools/list` of a
 * `tools/list_changed` — for the status and the log: worded as a call's lost session is, an HTTP error
 * with its status and its body on one line (describeTransportError), a request left unanswered with the
 * `connect_timeout` that bounds it, and without the entry's credentials (`secrets`): a server refusing
 * it may quote the key it was sent.
 */
export function sessionRequestFailure(
  err: unknown,
  secrets: readonly string[],
  connectTimeout: number,
): string {
  // The SDK's own "MCP error -32001: Request timed out" names neither the wait nor the key bounding it.
  const reason = isRequestTimeout(err)
    ? `no answer within ${connectTimeout} s (connect_timeout)`
    : isSessionExpired(err)
      ? `the server no longer knows the session (HTTP ${httpStatusOf(err) ?? 404})`
      : describeTransportError(err, secrets);
  return scrub(reason, secrets);
}

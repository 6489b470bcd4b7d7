/**
 * Following a task (`tasks/get`, then `tasks/result`) again after a poll lost its connection: the task runs
 * on at the server, and the session may well be alive (each HTTP request has a connection of its own), so
 * the call polls on instead of giving the task up as `outcome_uncertain` at the first network blip.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { type CallToolResult, CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { systemClock } from "../../clock.js";
import { STREAM_DROPPED, STREAM_NOT_RESUMED } from "./droppedStreams.js";
import { isTaskEnd, TaskEndError, TaskPollError } from "./taskPollError.js";

/** The longest wait between two polls after lost connections (each loss in a row doubles it). */
const MAX_RETRY_MS = 10_000;

const LOST_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/**
 * Whether a poll failed for want of a connection (reset, refused, cut before the answer; a response stream
 * dropped before its answer), not for an answer of the server's (an HTTP status such as 404 for a session it
 * no longer knows: the transport's `StreamableHTTPError`; a JSON-RPC error). Told by the error's type, code
 * and cause, never its text: fetch fails with a `TypeError` holding its cause (undici's `fetch failed`, a
 * body cut off: `terminated`). The SDK's task stream hands such a failure on as an `McpError` of its text
 * alone: the failure as thrown is `requestFailures`' to find.
 */
export function pollLostConnection(err: unknown): boolean {
  let cause: unknown = err;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    const data = cause instanceof McpError ? (cause.data as unknown) : undefined;
    if (data === STREAM_DROPPED || data === STREAM_NOT_RESUMED) return true;
    if (cause instanceof StreamableHTTPError) return false;
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === "string" && LOST_CODES.has(code)) return true;
    if (cause instanceof TypeError && cause.cause instanceof Error) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * Keeps, for each signal the client's requests are made with (a call's own), the last of them that failed
 * with no JSON-RPC error: the transport's failure as thrown (fetch's `TypeError` and its cause, a
 * `StreamableHTTPError` and its status). The SDK's task stream (`callToolStream`) hands such a failure on
 * flattened into `McpError(InternalError, String(err))`, which no longer tells a lost connection from a
 * server's answer (`pollLostConnection`). Returns the lookup: the failure behind a request made with
 * `signal` that failed last, undefined when the last one failed with an McpError or none failed.
 */
export function requestFailures(client: Client): (signal: AbortSignal) => Error | undefined {
  const failures = new WeakMap<AbortSignal, Error>();
  const request = client.request.bind(client);
  client.request = ((message: never, schema: never, options?: RequestOptions) => {
    const answer = request(message, schema, options);
    const signal = options?.signal;
    if (signal !== undefined)
      answer.then(
        () => failures.delete(signal),
        (err: unknown) => {
          if (err instanceof Error && !(err instanceof McpError)) failures.set(signal, err);
          else failures.delete(signal);
        },
      );
    return answer;
  }) as typeof client.request;
  return (signal) => failures.get(signal);
}

/** Waits `ms`, or less when `signal` aborts (the caller then looks at the signal). */
const pause = (ms: number, signal: AbortSignal) => systemClock.sleep(ms, signal).catch(() => undefined);

export interface FollowOptions {
  readonly timeoutMs: number;
  /** The call's: its deadline or the caller's abort ends the following (the caller then gives the task up). */
  readonly signal: AbortSignal;
  /** The server's `pollInterval` for the task: the first wait, and the base of the waits after losses. */
  readonly pollMs: number;
  /** False once svc closed the session or lost it: polling on would only fail again. */
  readonly usable: () => boolean;
}

/**
 * Polls task `taskId` until it ends, after `lost` (a poll that lost its connection): losses in a row wait
 * `pollMs`, then twice as long each time (at most 10 s); any other failure ends it as a `TaskPollError`
 * (a session the server no longer knows: the call is `outcome_uncertain`). A task that ends `failed` or
 * `cancelled` throws a `TaskEndError`. Returns once `signal` aborts too (undefined).
 */
export async function followTask(
  client: Client,
  taskId: string,
  lost: Error,
  options: FollowOptions,
): Promise<CallToolResult | undefined> {
  const { signal, timeoutMs } = options;
  const base = Math.max(1, options.pollMs);
  let wait = base;
  let last = lost;
  for (;;) {
    await pause(wait, signal);
    if (signal.aborted) return undefined;
    if (!options.usable()) throw new TaskPollError(taskId, last);
    try {
      const task = await client.experimental.tasks.getTask(taskId, { signal, timeout: timeoutMs });
      wait = Math.max(1, task.pollInterval ?? base);
      if (isTaskEnd(task.status)) throw new TaskEndError(taskId, task.status);
      // `input_required`: tasks/result carries the server's requests and waits for the task's end.
      if (task.status === "completed" || task.status === "input_required")
        return (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
          signal,
          timeout: timeoutMs,
        })) as CallToolResult;
    } catch (err) {
      if (signal.aborted) return undefined;
      if (err instanceof TaskEndError) throw err;
      if (!pollLostConnection(err)) throw new TaskPollError(taskId, err as Error);
      last = err as Error;
      wait = Math.min(wait * 2, MAX_RETRY_MS);
    }
  }
}

/**
 * Following a task (`tasks/get`, then `tasks/result`) again after a poll lost its connection: the task runs
 * on at the server, and the session may well be alive (each HTTP request has a connection of its own), so
 * the call polls on instead of giving the task up as `outcome_uncertain` at the first network blip.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { systemClock } from "../../clock.js";
import { STREAM_DROPPED, STREAM_NOT_RESUMED } from "./droppedStreams.js";
import { TaskPollError } from "./taskPollError.js";

/** The longest wait between two polls after lost connections (each loss in a row doubles it). */
const MAX_RETRY_MS = 10_000;

const LOST_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/**
 * Whether a poll failed for want of a connection (reset, refused, cut before the answer; a response stream
 * dropped before its answer), not for an answer of the server's (an HTTP status such as 404 for a session it
 * no longer knows, a JSON-RPC error). The SDK's task stream flattens the error into its text
 * (`MCP error -32603: TypeError: fetch failed`): that is read too.
 */
export function pollLostConnection(err: unknown): boolean {
  let cause: unknown = err;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    const data = cause instanceof McpError ? (cause.data as unknown) : undefined;
    if (data === STREAM_DROPPED || data === STREAM_NOT_RESUMED) return true;
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === "string" && LOST_CODES.has(code)) return true;
    if (cause instanceof TypeError && (cause.message === "fetch failed" || cause.message === "terminated"))
      return true;
    if (
      cause instanceof McpError &&
      cause.code === ErrorCode.InternalError &&
      /^MCP error -32603: TypeError: (?:fetch failed|terminated)$/.test(cause.message)
    )
      return true;
    cause = cause.cause;
  }
  return false;
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
 * `cancelled` throws the SDK's error for it (`isTaskEnd`). Returns once `signal` aborts too (undefined).
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
      if (task.status === "failed") throw new McpError(ErrorCode.InternalError, `Task ${taskId} failed`);
      if (task.status === "cancelled")
        throw new McpError(ErrorCode.InternalError, `Task ${taskId} was cancelled`);
      // `input_required`: tasks/result carries the server's requests and waits for the task's end.
      if (task.status === "completed" || task.status === "input_required")
        return (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
          signal,
          timeout: timeoutMs,
        })) as CallToolResult;
    } catch (err) {
      if (signal.aborted) return undefined;
      if (err instanceof McpError && err.message.endsWith(`Task ${taskId} failed`)) throw err;
      if (err instanceof McpError && err.message.endsWith(`Task ${taskId} was cancelled`)) throw err;
      if (!pollLostConnection(err)) throw new TaskPollError(taskId, err as Error);
      last = err as Error;
      wait = Math.min(wait * 2, MAX_RETRY_MS);
    }
  }
}

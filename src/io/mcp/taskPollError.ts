import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * Following a task the server created failed — a transport error or an error answer to `tasks/get` or
 * `tasks/result`, not the task's own end (`failed`, `cancelled`): the task may or may not have run.
 * `failure`: the transport's failure as thrown (a `StreamableHTTPError` and its status), where the SDK's
 * task stream handed it on flattened into `cause` (`requestFailures`).
 */
export class TaskPollError extends Error {
  constructor(
    readonly taskId: string,
    override readonly cause: Error,
    readonly failure?: Error,
  ) {
    super(`following task ${taskId} failed: ${cause.message}`, { cause });
    this.name = "TaskPollError";
  }
}

/** How a task ends on its own other than `completed`: the task's outcome, not a failed poll. */
export type TaskEnd = "failed" | "cancelled";

/**
 * A task the server reports `failed` or `cancelled` (its `status`, from `tasks/get`): the call's outcome is
 * known. Said as the SDK says it (`Task <id> failed`, `Task <id> was cancelled`), told by its type.
 */
export class TaskEndError extends McpError {
  constructor(
    readonly taskId: string,
    readonly status: TaskEnd,
    options?: { cause?: Error },
  ) {
    super(
      ErrorCode.InternalError,
      status === "failed" ? `Task ${taskId} failed` : `Task ${taskId} was cancelled`,
    );
    this.name = "TaskEndError";
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** Whether a task's `status` is its own end other than `completed`. */
export function isTaskEnd(status: string): status is TaskEnd {
  return status === "failed" || status === "cancelled";
}

/**
 * Following a task the server created failed — a transport error or an error answer to `tasks/get` or
 * `tasks/result`, not the task's own end (`failed`, `cancelled`): the task may or may not have run.
 */
export class TaskPollError extends Error {
  constructor(
    readonly taskId: string,
    override readonly cause: Error,
  ) {
    super(`following task ${taskId} failed: ${cause.message}`, { cause });
    this.name = "TaskPollError";
  }
}

/** The SDK's error for a task that ended `failed` or `cancelled`: the task's own outcome, not a failed poll. */
export function isTaskEnd(err: Error, taskId: string): boolean {
  return (
    err.message.endsWith(`Task ${taskId} failed`) || err.message.endsWith(`Task ${taskId} was cancelled`)
  );
}

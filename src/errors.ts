/** Every error svc raises itself carries a stable code; wire errors (HTTP outcomes) live in streams/outcome.ts. */
export type ErrorCode =
  | "config_invalid"
  | "config_unreadable"
  | "startup_refused"
  | "store_conflict"
  | "store_corrupt"
  | "store_unwritable"
  | "state_refused"
  | "lock_timeout"
  | "gateway_timeout"
  | "delivery_failed"
  | "script_failed"
  | "agent_failed"
  | "mcp_config"
  | "mcp_connect"
  | "mcp_call"
  | "mcp_timeout"
  | "outcome_uncertain"
  | "approval_denied"
  | "oauth"
  | "install_link"
  | "usage";

export class SvcError extends Error {
  override readonly name: string = "SvcError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A run whose agent the gateway's own stop signal ended (a whole unit or process group signalled at once):
 * not a failure; the run is kept and runs again at the next start, as one the drain cut short.
 */
export class RunKeptForRestart extends Error {
  override readonly name: string = "RunKeptForRestart";
}

/**
 * A run's failure whose notice its target took as the gateway's stop came (a mail the server took for some
 * recipients, the stop cutting short the retry for the others): the run ended, failed, as if no stop had
 * come. It is recorded finished and counted failed, not kept to run again: run again, it would send its
 * notice a second time. The message and `cause` are the failure's.
 */
export class RunFailedAtStop extends Error {
  override readonly name: string = "RunFailedAtStop";
  constructor(failure: unknown) {
    super(failure instanceof Error ? failure.message : String(failure), { cause: failure });
  }
}

/** A wait of the gateway's start (for a Redis loading its data) that its stop signal ended: no failure. */
export class StoppedWhileWaiting extends Error {
  override readonly name: string = "StoppedWhileWaiting";
}

/**
 * A start its stop signal came during, ended before the listener opened (what it had opened let go of,
 * no saved run taken): no failure.
 */
export class StoppedWhileStarting extends Error {
  override readonly name: string = "StoppedWhileStarting";
  constructor() {
    super("stopped while starting");
  }
}

/**
 * A failure already logged where it happened (a fired cron job's run: `[cron] <job>: run failed`): it
 * still fails its run for the delivery history and the run metrics, and a catcher that logs failures
 * does not log it a second time.
 */
export class LoggedError extends Error {
  override readonly name: string = "LoggedError";
}

export function isSvcError(err: unknown, code?: ErrorCode): err is SvcError {
  return err instanceof SvcError && (code === undefined || err.code === code);
}

/** A config.yaml (or `.env`) the load refused: one it cannot read, or one whose content it refuses. */
export function isConfigProblem(err: unknown): err is SvcError {
  return isSvcError(err, "config_invalid") || isSvcError(err, "config_unreadable");
}

/** A message safe to show a user: our own errors verbatim, anything else by its message only. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The message with up to three causes appended: "fetch failed" alone says little, its cause says why. */
export function describeWithCauses(err: unknown): string {
  let text = describeError(err);
  let cause = err instanceof Error ? err.cause : undefined;
  for (let depth = 0; cause instanceof Error && depth < 3; depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (cause.message !== "" && !text.includes(cause.message))
      text += `: ${cause.message}${code !== undefined && !cause.message.includes(code) ? ` (${code})` : ""}`;
    cause = cause.cause;
  }
  return text;
}

/**
 * A cron run whose agent answered but whose reply its target did not take: the failure, with the reply. A
 * scheduled run's reply is kept nowhere else (it is not journaled, and no command prints it), so the
 * scheduler's `run failed` line carries it. Its message is the delivery's failure, as `last_run.error` says it.
 */
export class UndeliveredReply extends Error {
  override readonly name = "UndeliveredReply";
  constructor(
    readonly reply: string,
    failure: unknown,
  ) {
    super(failure instanceof Error ? failure.message : String(failure), { cause: failure });
  }
}

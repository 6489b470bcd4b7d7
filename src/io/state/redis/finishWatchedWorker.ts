import {
  isNotConnectionError,
  type Job,
  type Processor,
  type Span,
  Worker,
  type WorkerOptions,
} from "bullmq";

/** The errors a job's `process` throws to be put back in Redis, not finished (BullMQ's own, by name). */
const NOT_FINISHING = new Set(["DelayedError", "WaitingError", "WaitingChildrenError", "RateLimitError"]);

/**
 * A BullMQ worker that tells `notRecorded` when Redis did not record the end (completed or failed) of a job
 * whose `process` had ended: its lock had expired (Redis frozen or paused past it: `Missing lock for job …`)
 * or another instance had taken the job over meanwhile (`Lock mismatch …`). BullMQ itself only emits a
 * worker `error` that does not say which job, and leaves the job to the stall check, which hands it to some
 * instance that runs it again. Told once per job; not for a connection's error, which BullMQ retries until
 * Redis answers, nor during a close (the stop says what it leaves in Redis).
 */
export class FinishWatchedWorker<T> extends Worker<T> {
  /** Errors already told: a finish refused as completed is tried again as failed, refused alike. */
  private readonly told = new WeakSet<Error>();

  constructor(
    name: string,
    processor: Processor<T>,
    options: WorkerOptions,
    private readonly notRecorded: (job: Job<T>, err: Error) => void,
  ) {
    super(name, processor, options);
  }

  private tell(job: Job<T>, err: unknown): void {
    if (!(err instanceof Error) || this.told.has(err) || !isNotConnectionError(err)) return;
    if (this.closing !== undefined) return;
    this.told.add(err);
    this.notRecorded(job, err);
  }

  /** Runs BullMQ's finish of `job`, telling what Redis refused of it (unless `tells` says no) before rethrowing. */
  private async finishing(
    job: Job<T>,
    finish: () => Promise<Job<T>>,
    tells: () => boolean = () => true,
  ): Promise<Job<T>> {
    try {
      return await finish();
    } catch (refused) {
      if (tells()) this.tell(job, refused);
      throw refused;
    }
  }

  protected override async handleCompleted(
    result: unknown,
    job: Job<T>,
    token: string,
    fetchNextCallback?: () => boolean,
    span?: Span,
  ): Promise<Job<T>> {
    return this.finishing(job, () => super.handleCompleted(result, job, token, fetchNextCallback, span));
  }

  protected override async handleFailed(
    err: Error,
    job: Job<T>,
    token: string,
    fetchNextCallback?: () => boolean,
    span?: Span,
  ): Promise<Job<T>> {
    // The refused completion, passed on as the job's failure, is refused again: told once, above.
    const tells = () => !NOT_FINISHING.has(err.name) && !this.told.has(err);
    return this.finishing(job, () => super.handleFailed(err, job, token, fetchNextCallback, span), tells);
  }
}

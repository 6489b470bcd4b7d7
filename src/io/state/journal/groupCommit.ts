import type { JournalFs } from "./fsFacade.js";
import { RecordBuffer } from "./records.js";

interface Batch {
  readonly records: RecordBuffer;
  promise?: Promise<void>;
  resolve?: () => void;
  reject?: (err: unknown) => void;
}

const newBatch = (): Batch => ({ records: new RecordBuffer() });

function promiseOf(batch: Batch): Promise<void> {
  if (batch.promise === undefined) {
    batch.promise = new Promise<void>((resolve, reject) => {
      batch.resolve = resolve;
      batch.reject = reject;
    });
    // A batch nobody awaits must not become an unhandled rejection.
    batch.promise.catch(() => {});
  }
  return batch.promise;
}

export interface GroupCommitOptions {
  readonly fs: JournalFs;
  /** Called with each batch once it is durable (a rotation copies it behind its snapshot). */
  readonly onFlushed?: (data: Buffer) => void;
  /** A failed write or sync (the waiting requests are answered 503 by the caller). */
  readonly onError?: (err: unknown) => void;
}

/**
 * Group commit: records appended while a write + fdatasync is in flight (or within the same turn of the
 * event loop) are written together by the next one, so a burst of N requests costs a few syncs, not N.
 * `durable()` is the promise a request waits for before it is answered.
 */
export class GroupCommitWriter {
  private open: Batch = newBatch();
  private inFlight: Batch | undefined;
  private scheduled = false;
  /** A flush or an exclusive task is under way; new records wait for the next flush. */
  private busy = false;
  /** Exclusive tasks waiting for the flush in flight to end (they go before the next flush). */
  private readonly waiting: Array<() => void> = [];
  private bytesInFile = 0;
  private closed = false;
  /** Set by `fail`: every flush from then on rejects its records with it. */
  private broken: unknown;

  constructor(
    private fd: number,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Encodes one record into the open batch; it is written with the next flush. */
  append(record: unknown): void {
    // After close (the stop's last steps) a record is dropped: at worst a finished run runs once more.
    if (this.closed) return;
    this.open.records.add(record);
    this.schedule();
  }

  /** Resolves once every record appended so far is on disk; undefined when that is already so. */
  durable(): Promise<void> | undefined {
    if (this.open.records.count > 0) return promiseOf(this.open);
    if (this.inFlight !== undefined) return promiseOf(this.inFlight);
    return undefined;
  }

  /** Bytes written to the current file through this writer (plus what `useFile` said it held). */
  fileBytes(): number {
    return this.bytesInFile;
  }

  /** Switches to another file (rotation); only inside `exclusive`, when nothing is in flight. */
  useFile(fd: number, bytes: number): void {
    this.fd = fd;
    this.bytesInFile = bytes;
  }

  /**
   * Runs `task` with no flush in flight and none starting until it settles (records appended meanwhile
   * wait for the flush after it). It goes before the next flush, so a steady stream of appends cannot
   * hold it off.
   */
  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy = true;
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /**
   * Stops making records durable: the file can no longer be trusted to hold them (a write could not be
   * undone, or a rotation left a segment that would hide them). Every waiting and later record is
   * rejected with `err` (the requests are answered 503).
   */
  fail(err: unknown): void {
    this.broken ??= err;
  }

  /** Flushes what is queued and stops taking records. */
  async close(): Promise<void> {
    this.closed = true;
    // Until nothing is queued and no flush or exclusive task is under way.
    while (this.busy || this.scheduled || this.open.records.count > 0) {
      await (this.durable() ?? new Promise<void>((resolve) => setImmediate(resolve))).catch(() => {});
    }
  }

  private schedule(): void {
    if (this.scheduled || this.busy) return;
    this.scheduled = true;
    // After the current turn: every request read in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.busy || this.open.records.count === 0) return;
    this.busy = true;
    const batch = this.open;
    this.open = newBatch();
    this.inFlight = batch;
    let writing = false;
    try {
      if (this.broken !== undefined) throw this.broken;
      const data = batch.records.data();
      writing = true;
      await this.options.fs.write(this.fd, data);
      writing = false;
      this.bytesInFile += data.length;
      await this.options.fs.fdatasync(this.fd);
      batch.resolve?.();
      this.options.onFlushed?.(data);
    } catch (err) {
      if (err !== this.broken) this.options.onError?.(err);
      batch.reject?.(err);
    } finally {
      this.inFlight = undefined;
    }
    // A write that failed part way left a piece of a record: later batches behind it could not be read.
    if (writing) await this.cutBack();
    this.release();
  }

  private async cutBack(): Promise<void> {
    try {
      await this.options.fs.truncate(this.fd, this.bytesInFile);
    } catch (err) {
      this.options.onError?.(err);
      this.fail(err);
    }
  }

  /** Hands the writer to a waiting exclusive task (it stays busy), or flushes what queued meanwhile. */
  private release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) {
      next();
      return;
    }
    this.busy = false;
    if (this.open.records.count > 0) void this.flush();
  }
}

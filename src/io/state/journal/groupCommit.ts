import type { JournalFs } from "./fsFacade.js";
import { RecordBuffer } from "./records.js";

interface Batch {
  readonly records: RecordBuffer;
  /** What the flush wrote (handed to `onFlushed` once durable). */
  data?: Buffer;
  promise?: Promise<void>;
  resolve?: () => void;
  reject?: (err: unknown) => void;
}

/** A batch with room for `bytes` of records (a quarter more than the last batch took: see `flush`). */
const newBatch = (bytes = 0): Batch => ({ records: new RecordBuffer(bytes + (bytes >> 2)) });

/**
 * How a batch is rejected when its write failed and was cut back: none of its records is in the file, so
 * nothing of it can be replayed and nothing needs undoing. A failed sync rejects with the error itself (its
 * records may be in the file), and so does a stopped writer (`fail`) or a cut-back that failed.
 */
export class RecordsNotWritten extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "RecordsNotWritten";
  }
}

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

/**
 * Syncs in flight at once. A sync covers every write that ended before it began, so a batch written while
 * other batches sync need not wait for them: its own sync starts at once. On this machine's disk, three
 * concurrent fdatasync loops complete ~2× as many syncs per second as one, and the gateway's accepted path
 * answers 4–17 % more requests per second at 32 connections (median 8 %, 7 interleaved pairs) with p50
 * ~10 % lower than with one sync at a time.
 */
export const MAX_SYNCS_IN_FLIGHT = 3;

/**
 * The step the file grows by, in zeros, ahead of its records (`JournalFs.grow`): it grows again once less than
 * half a step is left. A batch written into space the file already has is synced without a change to the
 * file's size or blocks: on this machine's ext4 disk, a 20 KB batch's write and fdatasync at the end of the file
 * cost ~120 µs of CPU and ~300 µs, into space grown ahead ~65 µs and ~165 µs (`bench/syncGrowth.ts`). One sync
 * in ~50 carries a step (~3 ms for 1 MiB).
 */
export const GROWTH_BYTES = 1024 * 1024;

export interface GroupCommitOptions {
  readonly fs: JournalFs;
  /** Called with each batch once it is durable, in the order of the file (a rotation copies it behind its snapshot). */
  readonly onFlushed?: (data: Buffer) => void;
  /**
   * A failed write or sync (the waiting requests are answered 503 by the caller): the first of an outage
   * only, not again until a sync succeeds (on a full disk every batch fails, one per turn of the loop).
   */
  readonly onError?: (err: unknown) => void;
  /**
   * A sync begun after a failed write or sync succeeded (the end of an outage): records appended meanwhile that
   * were not written (a run's finish, a group's firing) are missing from the file.
   */
  readonly onRecovered?: () => void;
  /** Called as each flush begins (once per batch, not per record): the journal looks whether its file moved. */
  readonly beforeFlush?: () => void;
}

/**
 * Group commit: records appended within the same turn of the event loop (or while the syncs in flight are
 * at their limit) are written together by the next flush, so a burst of N requests costs a few syncs, not
 * N. Writes go one at a time in the order of the file; their syncs overlap (up to MAX_SYNCS_IN_FLIGHT).
 * `durable()` is the promise a request waits for before it is answered.
 */
export class GroupCommitWriter {
  private open: Batch = newBatch();
  /** Written, in the order of the file, and not yet settled. */
  private readonly inFlight: Batch[] = [];
  private scheduled = false;
  /** The batch being written (or cut back after a failed write): the next write waits for it. */
  private writing: Batch | undefined;
  /** An exclusive task runs: no flush starts until it settles. */
  private held = false;
  /** Exclusive tasks waiting for the flushes in flight to end (they go before the next flush). */
  private readonly waiting: Array<() => void> = [];
  private bytesInFile = 0;
  /** The file's size as far as this writer knows: its records, and the zeros grown ahead of them. */
  private grownTo = 0;
  /** Where the records' end makes the file grow again (a growth that failed is tried again half a step on). */
  private growAt = 0;
  private closed = false;
  /** Set by `fail`: every flush from then on rejects its records with it. */
  private broken: unknown;
  /**
   * The error of a failed write whose piece could not be cut back: no batch is written behind it (a start
   * could read the refused records in it) until a cut-back tried before the next write succeeds.
   */
  private uncut: unknown;
  /** A write or sync failed and no sync begun since has succeeded: further failures are not reported. */
  private failing = false;
  /**
   * Counts sync starts and failures, in the order they happen: a sync ends an outage only if it began after
   * the outage's latest failure (one begun before, still in flight when a later write failed, says nothing
   * of the writes that fail now).
   */
  private events = 0;
  private lastFailure = 0;
  /** Set by `hold`: batches made durable meanwhile are released when it settles (rejected if it rejects). */
  private holding: Promise<void> | undefined;

  constructor(
    private fd: number,
    private readonly options: GroupCommitOptions,
  ) {}

  /**
   * Whether records are being made durable: false from a failed write or sync until a sync begun after it succeeds, and
   * for good once the writer is broken (`svc_state_available`).
   */
  accepting(): boolean {
    return !this.failing && this.broken === undefined;
  }

  /** Encodes one record into the open batch; it is written with the next flush. */
  append(record: unknown): void {
    // After close (the stop's last steps) a record is dropped: at worst a finished run runs once more.
    if (this.closed) return;
    this.open.records.add(record);
    this.schedule();
  }

  /** `append` of a record given as its JSON text. */
  appendText(text: string): void {
    if (this.closed) return;
    this.open.records.addText(text);
    this.schedule();
  }

  /** Resolves once every record appended so far is on disk; undefined when that is already so. */
  durable(): Promise<void> | undefined {
    if (this.open.records.count > 0) return promiseOf(this.open);
    const last = this.writing ?? this.inFlight.at(-1);
    return last === undefined ? this.holding : promiseOf(last);
  }

  /**
   * From now on, a batch whose sync ends is released only once `until` settles, and rejected with its error
   * if it rejects: the file synced may not be where a restart reads (its path was removed), and `until` is
   * the journal making those records durable elsewhere. `undefined` releases batches at their sync again.
   */
  hold(until: Promise<void> | undefined): void {
    this.holding = until;
  }

  /** Bytes of records in the current file: written through this writer, plus what `useFile` said it held. */
  fileBytes(): number {
    return this.bytesInFile;
  }

  /** Switches to another file (rotation); only inside `exclusive`, when nothing is in flight. */
  useFile(fd: number, bytes: number): void {
    this.fd = fd;
    this.bytesInFile = bytes;
    this.grownTo = bytes;
    this.growAt = bytes;
  }

  /**
   * Runs `task` with no write or sync in flight and none starting until it settles (records appended
   * meanwhile wait for the flush after it). It goes before the next flush, so a steady stream of appends
   * cannot hold it off.
   */
  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    if (this.idle() && !this.held && this.waiting.length === 0) this.held = true;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      this.held = false;
      this.next();
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
    while (!this.idle() || this.held || this.scheduled || this.open.records.count > 0) {
      await (this.durable() ?? new Promise<void>((resolve) => setImmediate(resolve))).catch(() => {});
    }
  }

  private idle(): boolean {
    return this.writing === undefined && this.inFlight.length === 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the current turn: every request read in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.next();
    });
  }

  /** Hands the writer to a waiting exclusive task once nothing is in flight, else starts the next flush. */
  private next(): void {
    if (this.held) return;
    if (this.waiting.length > 0) {
      if (!this.idle()) return;
      this.held = true;
      this.waiting.shift()?.();
      return;
    }
    if (
      this.writing !== undefined ||
      this.inFlight.length >= MAX_SYNCS_IN_FLIGHT ||
      this.open.records.count === 0
    )
      return;
    void this.flush();
  }

  private async flush(): Promise<void> {
    this.options.beforeFlush?.();
    const batch = this.open;
    this.writing = batch;
    // Sized for a batch like this one: a busy turn's records are not copied into buffer after buffer.
    this.open = newBatch(batch.records.bytes());
    // Whether the batch's write failed and was cut back: its records are sure not to be in the file.
    let undone = false;
    try {
      if (this.broken !== undefined) throw this.broken;
      if (this.uncut !== undefined && !(await this.cutBack())) throw new RecordsNotWritten(this.uncut);
      const data = batch.records.data();
      batch.data = data;
      try {
        await this.options.fs.write(this.fd, data, this.bytesInFile);
      } catch (err) {
        // A write that failed part way left a piece of a record: later batches behind it could not be read.
        undone = await this.cutBack();
        if (!undone) this.uncut = err;
        throw err;
      }
      this.bytesInFile += data.length;
      if (this.bytesInFile >= this.growAt) await this.grow();
    } catch (err) {
      this.writing = undefined;
      this.failed(batch, err, undone ? new RecordsNotWritten(err) : err);
      this.next();
      return;
    }
    this.inFlight.push(batch);
    this.writing = undefined;
    // The next batch may be written while this one syncs.
    this.next();
    const began = ++this.events;
    try {
      await this.options.fs.fdatasync(this.fd);
      this.synced(batch, began);
    } catch (err) {
      const at = this.inFlight.indexOf(batch);
      // Not in flight any more: a later sync, begun after its write, already made it durable.
      if (at < 0) this.report(err);
      else {
        this.inFlight.splice(at, 1);
        this.failed(batch, err);
      }
    }
    this.next();
  }

  /** `batch` and every batch written before it are durable: they are released in the order of the file. */
  private synced(batch: Batch, began: number): void {
    const recovered = this.failing && began > this.lastFailure;
    if (recovered) this.failing = false;
    const upTo = this.inFlight.indexOf(batch);
    if (upTo >= 0) {
      const held = this.holding;
      for (const done of this.inFlight.splice(0, upTo + 1)) {
        if (held === undefined) done.resolve?.();
        else
          held.then(
            () => done.resolve?.(),
            (err: unknown) => done.reject?.(err),
          );
        this.options.onFlushed?.(done.data as Buffer);
      }
    }
    if (recovered) this.options.onRecovered?.();
  }

  private failed(batch: Batch, err: unknown, rejection: unknown = err): void {
    if (err !== this.broken) this.report(err);
    batch.reject?.(rejection);
  }

  /** Reports a failed write or sync once per outage (see `onError`). */
  private report(err: unknown): void {
    this.lastFailure = ++this.events;
    if (this.failing) return;
    this.failing = true;
    this.options.onError?.(err);
  }

  /**
   * Grows the file a step past its records, before the sync that carries the step. A growth that fails (a
   * full disk) costs nothing but speed: the file is cut back to its records and the batches are then
   * written past its end, as appends.
   */
  private async grow(): Promise<void> {
    const from = Math.max(this.grownTo, this.bytesInFile);
    const to = this.bytesInFile + GROWTH_BYTES;
    try {
      await this.options.fs.grow(this.fd, from, to - from);
      this.grownTo = to;
    } catch {
      // The part of the step written before the disk ran out took its last blocks, which the other stores
      // (cron jobs, history) and the next start's snapshot need: given back. Not cut, they are zeros the
      // next batches overwrite.
      await this.options.fs.truncate(this.fd, this.bytesInFile).catch(() => {});
      this.grownTo = this.bytesInFile;
    }
    this.growAt = this.bytesInFile + GROWTH_BYTES / 2;
  }

  /**
   * Whether the file is back at its last whole batch. Else the cut-back is tried again before the next
   * write (`uncut`): a disk that failed a write and its undoing once (EIO, a file made immutable for a
   * moment) takes batches again once it undoes it, with no restart.
   */
  private async cutBack(): Promise<boolean> {
    try {
      await this.options.fs.truncate(this.fd, this.bytesInFile);
      this.grownTo = this.bytesInFile;
      this.growAt = this.bytesInFile;
      this.uncut = undefined;
      return true;
    } catch (err) {
      this.report(err);
      return false;
    }
  }
}

import { close as closeFd } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type DirLock, lockStateDir } from "./dirLock.js";
import { type JournalFs, nodeJournalFs } from "./fsFacade.js";
import { GroupCommitWriter } from "./groupCommit.js";
import { RecordBuffer } from "./records.js";
import {
  PreviousSegmentLeft,
  RestateFailed,
  RotationFailed,
  RotationLeftSegment,
  RotationStopped,
  type SegmentBuilt,
  SegmentRotation,
} from "./rotation.js";
import {
  ensureJournalDir,
  readJournal,
  removeTempSegments,
  type SegmentProblem,
  SNAPSHOT_BEGIN,
  SNAPSHOT_END,
  segmentName,
  startSegmentSync,
} from "./segments.js";

/** A segment is rotated past this size (or twice its own snapshot, when that is larger). */
export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

export interface JournalOptions {
  readonly dir: string;
  readonly fs?: JournalFs;
  readonly maxSegmentBytes?: number;
  /** A segment that could not be read whole (torn or corrupt tail, incomplete snapshot): logged, skipped. */
  readonly onProblem?: (problem: SegmentProblem) => void;
  /** Whether a record read back can be replayed (default: every one); see `readJournal`. */
  readonly understood?: (record: unknown) => boolean;
  /**
   * A failed write or sync (the waiting appends are rejected; once per outage: not again until a sync
   * succeeds, as every later append fails too on a full disk); a `RotationFailed` or `PreviousSegmentLeft`
   * (nothing is); a `RotationLeftSegment` (from then on every append is rejected).
   */
  readonly onError?: (err: unknown) => void;
}

/** What the journal held at open, for the log. */
export interface JournalOpened {
  readonly records: number;
  readonly segments: number;
  readonly bytes: number;
}

function encodeSnapshot(records: Iterable<unknown>): Buffer {
  const out = new RecordBuffer();
  out.add(SNAPSHOT_BEGIN);
  for (const record of records) out.add(record);
  out.add(SNAPSHOT_END);
  return out.data();
}

const closeRawFd = (fd: number) =>
  new Promise<void>((resolve) => {
    closeFd(fd, () => resolve());
  });

/**
 * The append-only journal: segments under `dir`, group commit on the current one. Every open replays the
 * segments (`restore`), then starts a new segment with a snapshot of what is still live (`snapshot`) and
 * removes the old ones. A segment past its size is rotated while the gateway runs, in the background
 * (`SegmentRotation`): appends stay durable in the current segment until the new one holds all of it.
 */
export class Journal {
  private readonly writer: GroupCommitWriter;
  private segment: number;
  private closeCurrent: () => Promise<void>;
  private snapshotBytes: number;
  private readonly lock: DirLock;
  private readonly fs: JournalFs;
  private rotation: SegmentRotation | undefined;
  private rotating: Promise<void> | undefined;
  /** After a failed rotation, the next waits until the segment grew this far (no retry per flush). */
  private retryAtBytes = 0;
  /**
   * Outages ended (see `restate`), and how many of them a rotation begun after their end has restated; after
   * a failed one, the next waits until the segment grew by a snapshot's size (the room it needs).
   */
  private outages = 0;
  private restated = 0;
  private restateAtBytes = 0;
  private closing = false;
  readonly opened: JournalOpened;

  constructor(
    private readonly options: JournalOptions,
    restore: (records: readonly unknown[]) => void,
    private readonly snapshot: () => Iterable<unknown>,
  ) {
    ensureJournalDir(options.dir);
    this.lock = lockStateDir(options.dir);
    this.fs = options.fs ?? nodeJournalFs;
    try {
      removeTempSegments(options.dir);
      const read = readJournal(
        options.dir,
        options.understood === undefined ? {} : { understood: options.understood },
      );
      for (const problem of read.problems) options.onProblem?.(problem);
      restore(read.records);
      this.opened = { records: read.records.length, segments: read.segments.length, bytes: read.bytes };
      this.segment = (read.segments.at(-1) ?? 0) + 1;
      const first = encodeSnapshot(snapshot());
      const fd = startSegmentSync(options.dir, this.segment, first, read.segments, read.keep);
      this.closeCurrent = () => closeRawFd(fd);
      this.snapshotBytes = first.length;
      this.writer = new GroupCommitWriter(fd, {
        fs: this.fs,
        onFlushed: (data) => this.flushed(data),
        onRecovered: () => this.restate(),
        ...(options.onError === undefined ? {} : { onError: options.onError }),
      });
      this.writer.useFile(fd, first.length);
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  append(record: unknown): void {
    this.writer.append(record);
  }

  /** Resolves once every record appended so far is durable (fdatasync); undefined when it already is. */
  durable(): Promise<void> | undefined {
    return this.writer.durable();
  }

  /** Whether appends are being made durable (see `GroupCommitWriter.accepting`). */
  accepting(): boolean {
    return this.writer.accepting();
  }

  /** The current segment's number and size (tests, bench). */
  currentSegment(): { n: number; bytes: number } {
    return { n: this.segment, bytes: this.writer.fileBytes() };
  }

  /** Resolves once no rotation is under way (tests, bench). */
  async rotated(): Promise<void> {
    await this.rotating;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.rotating;
    await this.writer.close();
    await this.closeCurrent();
    this.lock.release();
  }

  private flushed(data: Buffer): void {
    if (this.rotation !== undefined) {
      this.rotation.flushed(data);
      return;
    }
    if (this.rotating !== undefined || this.closing) return;
    const bytes = this.writer.fileBytes();
    const limit = this.limit();
    if (
      (this.restated < this.outages && bytes >= this.restateAtBytes) ||
      (bytes > limit && bytes >= this.retryAtBytes)
    )
      this.startRotation(limit);
  }

  private limit(): number {
    return Math.max(this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES, 2 * this.snapshotBytes);
  }

  /**
   * The end of an outage (a write or sync failed, and one succeeded since): what was appended meanwhile
   * and not written (a run's finish, a group's firing, a direct delivery made) is in the live state only,
   * so a restart would run that run or group again. A new segment restates the live state.
   */
  private restate(): void {
    this.outages += 1;
    this.restateAtBytes = 0;
    // One under way may have read the live state before the outage: the next one starts when it ends.
    if (this.rotating === undefined && !this.closing) this.startRotation(this.limit());
  }

  private startRotation(limit: number): void {
    // Begun after the outages so far ended, it restates what they lost.
    const outages = this.outages;
    const restating = this.restated < outages;
    const rotation = new SegmentRotation(this.options.dir, this.segment + 1, this.snapshot(), this.fs);
    this.rotation = rotation;
    this.rotating = this.rotate(rotation)
      .then(() => {
        this.retryAtBytes = 0;
        this.restated = outages;
      })
      .catch((err: unknown) => {
        if (restating) this.restateAtBytes = this.writer.fileBytes() + this.snapshotBytes;
        else this.retryAtBytes = this.writer.fileBytes() + limit / 4;
        if (!(err instanceof RotationStopped))
          this.options.onError?.(restating ? new RestateFailed(err) : new RotationFailed(err));
      })
      .finally(() => {
        this.rotation = undefined;
        this.rotating = undefined;
        // An outage that ended while it ran: restated now (after a failed restatement, once there is room).
        if (this.restated < this.outages && !this.closing && this.writer.fileBytes() >= this.restateAtBytes)
          this.startRotation(this.limit());
      });
  }

  private async rotate(rotation: SegmentRotation): Promise<void> {
    try {
      await rotation.build(() => this.closing);
    } catch (err) {
      // Only the temp file exists: what cleaning it up might leave, the next start removes.
      await rotation.discard(closeRawFd).catch(() => {});
      throw err;
    }
    const old = this.segment;
    let closeOld: () => Promise<void> = async () => {};
    await this.writer.exclusive(async () => {
      let built: SegmentBuilt;
      try {
        built = await rotation.commit();
      } catch (err) {
        // Cleaned up before the writer takes appends again: the new segment may have its name already.
        await rotation.discard(closeRawFd).catch((cleanup: unknown) => {
          const left = new RotationLeftSegment(cleanup, rotation.segmentPath);
          this.writer.fail(left);
          this.options.onError?.(left);
        });
        throw err;
      }
      this.writer.useFile(built.fd, built.bytes);
      this.snapshotBytes = built.snapshotBytes;
      this.segment = rotation.n;
      closeOld = this.closeCurrent;
      this.closeCurrent = () => closeRawFd(built.fd);
      // Batches flushed from here on are in the new segment already.
      this.rotation = undefined;
    });
    const file = join(this.options.dir, segmentName(old));
    try {
      await closeOld();
      await rm(file, { force: true });
    } catch (err) {
      this.options.onError?.(new PreviousSegmentLeft(err, file));
    }
  }
}

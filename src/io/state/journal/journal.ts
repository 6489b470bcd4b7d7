import { close as closeFd } from "node:fs";
import { type DirLock, lockStateDir } from "./dirLock.js";
import { type JournalFs, nodeJournalFs } from "./fsFacade.js";
import { GroupCommitWriter } from "./groupCommit.js";
import { encodeRecord, encodeRecords } from "./records.js";
import {
  ensureJournalDir,
  readJournal,
  type SegmentProblem,
  SNAPSHOT_BEGIN,
  SNAPSHOT_END,
  startSegment,
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
  /** A failed write, sync or rotation. */
  readonly onError?: (err: unknown) => void;
}

/** What the journal held at open, for the log. */
export interface JournalOpened {
  readonly records: number;
  readonly segments: number;
  readonly bytes: number;
}

function encodeSnapshot(records: readonly unknown[]): Buffer {
  return Buffer.concat([
    encodeRecord(SNAPSHOT_BEGIN),
    ...records.map(encodeRecord),
    encodeRecord(SNAPSHOT_END),
  ]);
}

const closeRawFd = (fd: number) =>
  new Promise<void>((resolve) => {
    closeFd(fd, () => resolve());
  });

/**
 * The append-only journal: segments under `dir`, group commit on the current one. Every open replays the
 * segments (`restore`), then starts a new segment with a snapshot of what is still live (`snapshot`) and
 * removes the old ones; a segment past its size is rotated the same way while the gateway runs.
 */
export class Journal {
  private readonly writer: GroupCommitWriter;
  private segment: number;
  private closeCurrent: () => Promise<void>;
  private snapshotBytes: number;
  private readonly lock: DirLock;
  readonly opened: JournalOpened;

  constructor(
    private readonly options: JournalOptions,
    restore: (records: readonly unknown[]) => void,
    private readonly snapshot: () => unknown[],
  ) {
    ensureJournalDir(options.dir);
    this.lock = lockStateDir(options.dir);
    try {
      const read = readJournal(options.dir);
      for (const problem of read.problems) options.onProblem?.(problem);
      restore(read.records);
      this.opened = { records: read.records.length, segments: read.segments.length, bytes: read.bytes };
      this.segment = (read.segments.at(-1) ?? 0) + 1;
      const first = encodeSnapshot(snapshot());
      const fd = startSegmentSync(options.dir, this.segment, first, read.segments);
      this.closeCurrent = () => closeRawFd(fd);
      this.snapshotBytes = first.length;
      this.writer = new GroupCommitWriter(fd, {
        fs: options.fs ?? nodeJournalFs,
        onIdleBetweenFlushes: () => this.rotateIfFull(),
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

  /** The current segment's number and size (tests, bench). */
  currentSegment(): { n: number; bytes: number } {
    return { n: this.segment, bytes: this.writer.fileBytes() };
  }

  async close(): Promise<void> {
    await this.writer.close();
    await this.closeCurrent();
    this.lock.release();
  }

  private async rotateIfFull(): Promise<void> {
    const limit = Math.max(this.options.maxSegmentBytes ?? DEFAULT_MAX_SEGMENT_BYTES, 2 * this.snapshotBytes);
    if (this.writer.fileBytes() <= limit) return;
    const next = this.segment + 1;
    const data = encodeSnapshot(this.snapshot());
    const started = await startSegment(this.options.dir, next, data, [this.segment]);
    const previous = this.closeCurrent;
    this.segment = next;
    this.closeCurrent = started.close;
    this.snapshotBytes = data.length;
    this.writer.useFile(started.fd, data.length);
    await previous();
  }
}

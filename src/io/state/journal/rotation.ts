import { openSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { JournalFs } from "./fsFacade.js";
import { RecordBuffer } from "./records.js";
import { SNAPSHOT_BEGIN, SNAPSHOT_END, segmentName, tempSegmentName } from "./segments.js";

/**
 * A snapshot is encoded this many records (or bytes) at a time, one slice per turn of the event loop:
 * ~1–2 ms of encoding, so requests are served between slices rather than after a whole snapshot
 * (100,000 idempotency keys encode in ~300 ms).
 */
const SLICE_RECORDS = 512;
const SLICE_BYTES = 256 * 1024;
/** The records flushed meanwhile are copied behind the snapshot until this little is left for the switch. */
const SWITCH_TAIL_BYTES = 256 * 1024;
const MAX_CATCH_UP_ROUNDS = 8;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Thrown out of `build` when the journal closes mid-rotation: the temp file goes, nothing is reported. */
export class RotationStopped extends Error {
  constructor() {
    super("the journal closed during a rotation");
  }
}

/** A rotation that failed: reported, the current segment keeps taking the appends. */
export class RotationFailed extends Error {
  constructor(override readonly cause: unknown) {
    super(`rotating the journal failed (${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

export interface SegmentBuilt {
  readonly fd: number;
  /** Bytes in the new segment: its snapshot and the records copied behind it. */
  readonly bytes: number;
  readonly snapshotBytes: number;
}

/**
 * One rotation, built while the gateway keeps appending to the current segment: the snapshot goes into
 * `journal-<n>.seg.tmp` in slices, then every batch flushed to the current segment since the snapshot
 * began (`flushed`) is copied behind it. `commit`, run between two flushes, copies the last few batches,
 * syncs the file and renames it to `journal-<n>.seg`: only then does it count as a segment, and it holds
 * everything the current one does. A crash before that leaves a temp file that the next start removes.
 */
export class SegmentRotation {
  private readonly tempPath: string;
  private fd: number | undefined;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private written = 0;
  private snapshotBytes = 0;

  constructor(
    private readonly dir: string,
    readonly n: number,
    private readonly records: Iterable<unknown>,
    private readonly fs: JournalFs,
  ) {
    this.tempPath = join(dir, tempSegmentName(n));
  }

  /** A batch made durable in the current segment after the snapshot began: it follows the snapshot. */
  flushed(data: Buffer): void {
    this.tail.push(data);
    this.tailBytes += data.length;
  }

  /** Writes the snapshot, a slice per turn, then catches up with the batches flushed meanwhile. */
  async build(stopped: () => boolean): Promise<void> {
    await rm(this.tempPath, { force: true });
    this.fd = openSync(this.tempPath, "a", 0o600);
    const iterator = this.records[Symbol.iterator]();
    let slice = new RecordBuffer();
    slice.add(SNAPSHOT_BEGIN);
    for (;;) {
      let next = iterator.next();
      while (next.done !== true) {
        slice.add(next.value);
        if (slice.count >= SLICE_RECORDS || slice.data().length >= SLICE_BYTES) break;
        next = iterator.next();
      }
      if (next.done === true) slice.add(SNAPSHOT_END);
      await this.append(slice.data());
      // The write above is synchronous (page cache): let the requests that arrived meanwhile in.
      await nextTurn();
      if (stopped()) throw new RotationStopped();
      if (next.done === true) break;
      slice = new RecordBuffer();
    }
    this.snapshotBytes = this.written;
    // Synced here, not in `commit`: the switch then syncs only the last few batches while appends wait.
    await this.fs.fdatasync(this.openFd());
    for (let round = 0; round < MAX_CATCH_UP_ROUNDS && this.tailBytes > SWITCH_TAIL_BYTES; round++) {
      await this.copyTail();
      await this.fs.fdatasync(this.openFd());
      if (stopped()) throw new RotationStopped();
    }
  }

  /**
   * Copies the last batches, makes the file durable and gives it its segment name. Run while no flush is
   * in flight (nothing is added to the tail meanwhile); from then on the new segment takes the appends.
   */
  async commit(): Promise<SegmentBuilt> {
    const fd = this.openFd();
    await this.copyTail();
    await this.fs.fdatasync(fd);
    await this.fs.rename(this.tempPath, join(this.dir, segmentName(this.n)));
    await this.fs.syncDir(this.dir);
    return { fd, bytes: this.written, snapshotBytes: this.snapshotBytes };
  }

  /**
   * After a failure or a stop: the file goes, under either name (a commit may fail after its rename: a
   * segment left behind would supersede the current one, which keeps taking the appends).
   */
  async discard(close: (fd: number) => Promise<void>): Promise<void> {
    this.tail = [];
    if (this.fd !== undefined) await close(this.fd);
    await rm(this.tempPath, { force: true });
    await rm(join(this.dir, segmentName(this.n)), { force: true });
  }

  private async copyTail(): Promise<void> {
    const batches = this.tail;
    this.tail = [];
    this.tailBytes = 0;
    let sinceTurn = 0;
    for (const data of batches) {
      await this.append(data);
      sinceTurn += data.length;
      if (sinceTurn >= SLICE_BYTES) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
  }

  private async append(data: Buffer): Promise<void> {
    await this.fs.write(this.openFd(), data);
    this.written += data.length;
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error("the rotation's file is not open yet");
    return this.fd;
  }
}

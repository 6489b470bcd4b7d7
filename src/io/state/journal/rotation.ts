import { lstatSync, openSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { JournalFs } from "./fsFacade.js";
import { RecordBuffer } from "./records.js";
import { SNAPSHOT_END, segmentName, snapshotBegin, tempSegmentName } from "./segments.js";

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

const TAIL_CHUNK_BYTES = 256 * 1024;

/**
 * Bytes kept in order, copied into chunks of their own: a batch's buffer is a view into a larger
 * allocation (often Node's shared pool), which holding the view would keep alive whole.
 */
class ByteQueue {
  private readonly full: Buffer[] = [];
  private chunk: Buffer | undefined;
  private used = 0;
  bytes = 0;

  push(data: Buffer): void {
    if (this.chunk === undefined || this.used + data.length > this.chunk.length) {
      if (this.chunk !== undefined) this.full.push(this.chunk.subarray(0, this.used));
      this.chunk = Buffer.allocUnsafeSlow(Math.max(TAIL_CHUNK_BYTES, data.length));
      this.used = 0;
    }
    data.copy(this.chunk, this.used);
    this.used += data.length;
    this.bytes += data.length;
  }

  /** Everything pushed so far, oldest first; the queue is empty after. */
  take(): Buffer[] {
    const out = this.full.splice(0);
    if (this.chunk !== undefined && this.used > 0) out.push(this.chunk.subarray(0, this.used));
    this.chunk = undefined;
    this.used = 0;
    this.bytes = 0;
    return out;
  }
}

/**
 * Thrown out of `build` or `commit` when the journal closes mid-rotation, or when another gateway took the
 * state directory over: the temp file goes, nothing is reported.
 */
export class RotationStopped extends Error {
  constructor() {
    super("the rotation stopped (the journal closed, or another gateway took the state directory over)");
  }
}

/** What `link` fails with on a file system that has no hard links: the segment is named by a rename then. */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

const reason = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));

/** A rotation that failed: reported, the current segment keeps taking the appends. */
export class RotationFailed extends Error {
  constructor(override readonly cause: unknown) {
    super(`rotating the journal failed (${reason(cause)})`);
  }
}

/**
 * Thrown out of `commit` when the new segment's name holds a file already (the link fails EEXIST): left as
 * it is. The journal says which: another gateway's segment (it took the state directory over), or a file
 * put there that is not this gateway's (`RotationBlocked`).
 */
export class SegmentNameTaken extends Error {
  constructor(
    override readonly cause: unknown,
    readonly file: string,
  ) {
    super(`${file} is there already (${reason(cause)})`);
  }
}

/**
 * A file that is not this gateway's is at the next segment's name, and no other gateway took the state
 * directory over: the journal does not rotate (the segment is never numbered past it: a segment numbered past
 * the current one is how a takeover is found) until the file is moved away, which the journal looks for once
 * a second. Said once; `bytes` is the current segment's size then, `restating` whether the rotation was to
 * restate what an outage could not record.
 */
export class RotationBlocked extends Error {
  constructor(
    override readonly cause: unknown,
    readonly file: string,
    readonly bytes: number,
    readonly restating: boolean,
  ) {
    super(`${file} is in the way of the journal's next segment (${reason(cause)})`);
  }
}

/**
 * A rotation that was to restate what an outage could not record (a run's finish, a group's firing)
 * failed too: until one succeeds, a restart runs those runs and groups again.
 */
export class RestateFailed extends RotationFailed {}

/**
 * A rotation failed after its new segment got its name, and that segment could not be removed: it would
 * hide what the current one takes from now on, so the journal stops taking records (503s).
 */
export class RotationLeftSegment extends Error {
  constructor(
    override readonly cause: unknown,
    readonly file: string,
  ) {
    super(`a failed rotation left ${file}, which could not be removed (${reason(cause)})`);
  }
}

/**
 * The current segment's path lost its file (the state directory removed or moved while the gateway ran)
 * and the directory and a new segment restating what is live could not be made: the requests waiting are
 * answered 503, and later ones until a try (at most once a second) succeeds.
 */
export class JournalNotRecreated extends Error {
  constructor(
    override readonly cause: unknown,
    readonly dir: string,
  ) {
    super(`the journal in ${dir} could not be recreated (${reason(cause)})`);
  }
}

/** The previous segment could not be removed after a rotation: it is superseded, removed at the next start. */
export class PreviousSegmentLeft extends Error {
  constructor(
    override readonly cause: unknown,
    readonly file: string,
  ) {
    super(`${file} could not be removed after a rotation (${reason(cause)})`);
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
 * syncs the file and gives it the name `journal-<n>.seg` (never in place of a file there): only then does
 * it count as a segment, and it holds everything the current one does. A crash before that leaves a temp
 * file that the next start removes.
 */
export class SegmentRotation {
  private readonly tempPath: string;
  private fd: number | undefined;
  private readonly tail = new ByteQueue();
  private written = 0;
  private snapshotBytes = 0;
  /** `commit` gave the file its segment name: only then is the file at `segmentPath` this rotation's. */
  private named = false;

  constructor(
    private readonly dir: string,
    readonly n: number,
    /** The journal's id, which the snapshot's first record names with `n`. */
    private readonly journalId: string,
    private readonly records: Iterable<unknown>,
    private readonly fs: JournalFs,
  ) {
    this.tempPath = join(dir, tempSegmentName(n));
  }

  /** A batch made durable in the current segment after the snapshot began: it follows the snapshot. */
  flushed(data: Buffer): void {
    this.tail.push(data);
  }

  /** Writes the snapshot, a slice per turn, then catches up with the batches flushed meanwhile. */
  async build(stopped: () => boolean): Promise<void> {
    await rm(this.tempPath, { force: true });
    // Not for appending: a segment's writes name their position (its records, then the zeros grown ahead).
    this.fd = openSync(this.tempPath, "w", 0o600);
    const iterator = this.records[Symbol.iterator]();
    let slice = new RecordBuffer();
    slice.add(snapshotBegin(this.journalId, this.n));
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
    for (let round = 0; round < MAX_CATCH_UP_ROUNDS && this.tail.bytes > SWITCH_TAIL_BYTES; round++) {
      await this.copyTail();
      await this.fs.fdatasync(this.openFd());
      if (stopped()) throw new RotationStopped();
    }
  }

  /**
   * Copies the last batches, makes the file durable and gives it its segment name. Run while no flush is
   * in flight (nothing is added to the tail meanwhile); from then on the new segment takes the appends.
   * `stopped` is asked just before the name is given (another gateway took the state directory over while
   * the file was synced: the name is that gateway's to give, and may be its segment's already).
   */
  async commit(stopped: () => boolean): Promise<SegmentBuilt> {
    const fd = this.openFd();
    await this.copyTail();
    await this.fs.fdatasync(fd);
    if (stopped()) throw new RotationStopped();
    await this.name();
    await this.fs.syncDir(this.dir);
    return { fd, bytes: this.written, snapshotBytes: this.snapshotBytes };
  }

  /**
   * Gives the file its segment name, never in place of a file there (`SegmentNameTaken`): another gateway's
   * (it took the state directory over after this file was made, so its start did not remove it, wrote its own
   * segment under that number and may have stopped since, its lock released), or one put there by hand. A hard
   * link fails then (EEXIST), in one step; the temp name is removed after it. A crash between the two
   * leaves both names on the one file, and the start removes the temp name only. On a file system without
   * hard links (some FUSE ones) the name is looked at, then the file renamed: run in the writer's exclusive
   * section, so no rotation of this journal comes between, and another gateway's start removes the temp
   * files before it writes a segment (the rename then fails).
   */
  private async name(): Promise<void> {
    try {
      await this.fs.link(this.tempPath, this.segmentPath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (code === "EEXIST") throw new SegmentNameTaken(err, this.segmentPath);
      if (!LINK_UNSUPPORTED.has(code)) throw err;
      // The entry itself: a symbolic link to nothing there would be replaced by the rename.
      if (lstatSync(this.segmentPath, { throwIfNoEntry: false }) !== undefined)
        throw new SegmentNameTaken(
          Object.assign(new Error(`EEXIST: file already exists, ${this.segmentPath} (left as it is)`), {
            code: "EEXIST",
          }),
          this.segmentPath,
        );
      await this.fs.rename(this.tempPath, this.segmentPath);
      this.named = true;
      return;
    }
    this.named = true;
    await this.fs.unlink(this.tempPath);
  }

  /** The path the segment gets at its commit. */
  get segmentPath(): string {
    return join(this.dir, segmentName(this.n));
  }

  /**
   * After a failure or a stop: the file goes, under the names it has (a commit may fail after it named it: a
   * segment left behind would supersede the current one, which keeps taking the appends), and the
   * directory is synced so that the removal outlives a crash (a directory removed meanwhile took the file with
   * it). The segment's name is removed only when this rotation gave it: a file there otherwise is another's
   * (a gateway that took the state directory over and wrote its own segment under that number). Run before the writer takes appends again.
   */
  async discard(close: (fd: number) => Promise<void>): Promise<void> {
    this.tail.take();
    if (this.fd !== undefined) await close(this.fd);
    await rm(this.tempPath, { force: true });
    if (this.named) await rm(this.segmentPath, { force: true });
    await this.fs.syncDir(this.dir).catch((err: unknown) => {
      // The directory itself is gone (removed while the gateway ran): so is the file, under either name.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    });
  }

  private async copyTail(): Promise<void> {
    let sinceTurn = 0;
    for (const data of this.tail.take()) {
      await this.append(data);
      sinceTurn += data.length;
      if (sinceTurn >= SLICE_BYTES) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
  }

  private async append(data: Buffer): Promise<void> {
    await this.fs.write(this.openFd(), data, this.written);
    this.written += data.length;
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error("the rotation's file is not open yet");
    return this.fd;
  }
}
